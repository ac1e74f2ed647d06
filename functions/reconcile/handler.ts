import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { reconcileDepsFromEnvironment } from '../core/environment.ts';
import type { ReconcileDeps } from '../core/reconcile/deps.ts';
import { deliveriesForEvent, type ReconcileTrigger } from '../core/reconcile/triggers.ts';
import { reconcile, type ReconcileResult } from '../core/reconcile/reconcile.ts';
import { RECONCILE_METRICS, recordReconcileMetrics, type MetricsScope } from './metrics.ts';
import { RUNTIME_ENV } from '../core/runtime-contract.ts';

const logger = new Logger({ serviceName: 'sluice-reconcile' });
const metrics = new Metrics({
  namespace: RECONCILE_METRICS.namespace,
  serviceName: RECONCILE_METRICS.service,
});

/** SLUICE_METRICS_SCOPE=fleet (the construct's `monitoring: 'fleet'`): metrics without the delivery dimension. */
const metricsScope: MetricsScope = process.env[RUNTIME_ENV.metricsScope] === 'fleet' ? 'fleet' : 'delivery';

/** What the reconcile function did with an event: reconciled it here, or handed each delivery to an invocation of its own. */
export type ReconcileAnswer = ReconcileResult[] | { readonly invoked: readonly string[] };

/** What the function needs of Lambda's context. */
export type ReconcileInvocation = Pick<Context, 'awsRequestId'> &
  Partial<Pick<Context, 'invokedFunctionArn'>>;

/** `arn:aws:lambda:<region>:<account>:function:<name>[:<alias or version>]` without the qualifier. */
function unqualified(functionArn: string | undefined): string | undefined {
  return functionArn?.split(':').slice(0, 7).join(':');
}

/**
 * The reconcile function for given dependencies. An event naming one delivery (or an ECR push or
 * gate opening that concerns one) is reconciled here; one that concerns several fans out: one
 * asynchronous invocation per delivery (`deps.reconcileNow`), so a thousand deliveries are a
 * thousand runs side by side, each within its own timeout, each failure retried and routed to the
 * failure queue on its own. Without `reconcileNow` (run outside Lambda) they are reconciled here,
 * one after another.
 */
export function reconcileHandler(
  depsFor: (invocation: ReconcileInvocation) => ReconcileDeps,
): (event: ReconcileTrigger, context: ReconcileInvocation) => Promise<ReconcileAnswer> {
  return async (event, context) => {
    const deps = depsFor(context);
    const names = await deliveriesForEvent(event, deps.db);
    if (names.length > 1 && deps.reconcileNow) {
      await deps.reconcileNow(names);
      logger.info('fanned out', { deliveries: names.length });
      return { invoked: names };
    }
    const results: ReconcileResult[] = [];
    for (const name of names) {
      const started = deps.clock.now();
      const result = await reconcile(name, deps);
      // Powertools keeps `message` for the log line's own: the result's goes in it.
      const { message, ...fields } = result;
      // The dashboard's queries read these fields: they cost no custom metrics.
      logger.info(`reconciled: ${message}`, {
        ...fields,
        ...revisionFields(result),
        ...runTimes(result, started, deps.clock.now()),
      });
      recordReconcileMetrics(metrics, result, deps.clock.now(), metricsScope);
      results.push(result);
    }
    return results;
  };
}

/**
 * The revision running and the one held, apart (the dashboard's columns): `-` for none, so that
 * the latest run's line always says, and an earlier hold does not show once the release went out.
 */
export function revisionFields(result: Pick<ReconcileResult, 'appliedRevision' | 'heldRevision'>): {
  appliedRevision: string;
  heldRevision: string;
} {
  return { appliedRevision: result.appliedRevision ?? '-', heldRevision: result.heldRevision ?? '-' };
}

/** How long the run took and, as it ended, how long since the delivery last succeeded (both for the dashboard). */
export function runTimes(
  result: ReconcileResult,
  started: Date,
  ended: Date,
): { durationMs: number; secondsSinceSuccess?: number } {
  const success = result.lastSuccessAt ? Date.parse(result.lastSuccessAt) : NaN;
  return {
    durationMs: ended.getTime() - started.getTime(),
    ...(!Number.isNaN(success) && {
      secondsSinceSuccess: Math.max(0, Math.round((ended.getTime() - success) / 1000)),
    }),
  };
}

/** The clients, credentials and cluster connections live as long as the container, across invocations. */
const containerDeps = new Map<string | undefined, ReconcileDeps>();

/**
 * `{"delivery":"name"}`, `{"gateOpened":"gate"}`, an ECR "ECR Image Action" PUSH event or a
 * "CloudWatch Alarm State Change" of an alarm gate's alarm: reconciles the deliveries it concerns
 * (see reconcileHandler).
 */
export const handler = reconcileHandler((context) => {
  const functionArn = unqualified(context.invokedFunctionArn);
  let deps = containerDeps.get(functionArn);
  if (!deps) {
    deps = reconcileDepsFromEnvironment({
      runId: context.awsRequestId,
      log: (message) => logger.info(message),
      functionArn,
      cacheArtifacts: true,
    });
    containerDeps.set(functionArn, deps);
  }
  return { ...deps, runId: context.awsRequestId };
});
