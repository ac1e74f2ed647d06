import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { reconcileDepsFromEnvironment } from '../core/environment.ts';
import { deliveriesForEvent, type ReconcileTrigger } from '../core/reconcile/triggers.ts';
import { reconcile, type ReconcileResult } from '../core/reconcile/reconcile.ts';
import { getStatus } from '../core/store/status.ts';
import { RECONCILE_METRICS, recordReconcileMetrics } from './metrics.ts';

const logger = new Logger({ serviceName: 'sluice-reconcile' });
const metrics = new Metrics({
  namespace: RECONCILE_METRICS.namespace,
  serviceName: RECONCILE_METRICS.service,
});

/** `arn:aws:lambda:<region>:<account>:function:<name>[:<alias or version>]` without the qualifier. */
function unqualified(functionArn: string | undefined): string | undefined {
  return functionArn?.split(':').slice(0, 7).join(':');
}

/** `{"delivery":"name"}` or an ECR "ECR Image Action" PUSH event: reconciles the deliveries it names. */
export async function handler(event: ReconcileTrigger, context: Context): Promise<ReconcileResult[]> {
  const deps = reconcileDepsFromEnvironment({
    runId: context.awsRequestId,
    log: (message) => logger.info(message),
    functionArn: unqualified(context.invokedFunctionArn),
  });
  const names = await deliveriesForEvent(event, deps.db);
  const results: ReconcileResult[] = [];
  for (const name of names) {
    const result = await reconcile(name, deps);
    logger.info('reconciled', { ...result });
    const status = result.outcome === 'Blocked' ? await getStatus(deps.db, name) : undefined;
    recordReconcileMetrics(metrics, result, status, deps.clock.now());
    results.push(result);
  }
  return results;
}
