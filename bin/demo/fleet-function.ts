// The reconcile function as deployed, in the demo's process: the real handler, invoked
// asynchronously (Lambda's stand-in runs up to three at once), by the ECR push event EventBridge
// would deliver, by its own follow-ups (reconcileNow) and by one-time schedules (a soak's end).
import { randomUUID } from 'node:crypto';
import { SimLambda, simScheduler } from '../../dev/lambda.ts';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import type { EcrImageActionEvent, ReconcileTrigger } from '../../functions/core/reconcile/triggers.ts';

export interface LocalReconcileFunction {
  /** What EventBridge delivers after `sluice push` to an ECR repository: the push event. */
  readonly pushed: (repository: string, tag: string) => void;
  /** Deletes pending schedules and waits for the invocations under way. */
  readonly stop: () => Promise<void>;
}

/** The ECR "ECR Image Action" event of a successful push of `repository:tag`. */
export function ecrPushEvent(repository: string, tag: string, region: string): EcrImageActionEvent {
  return {
    source: 'aws.ecr',
    'detail-type': 'ECR Image Action',
    account: '123456789012',
    region,
    detail: { 'action-type': 'PUSH', result: 'SUCCESS', 'repository-name': repository, 'image-tag': tag },
  };
}

/**
 * Starts the stand-in. Schedules fire at the whole second (Scheduler fires at the whole minute), so
 * a soak of seconds lasts seconds. `report` is told each run's result, `log` the function's log.
 */
export async function startReconcileFunction(
  report: (result: ReconcileResult) => void,
  log: (message: string) => void,
): Promise<LocalReconcileFunction> {
  // Read by the handler's logger and metrics when its module loads: the demo prints results itself.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const { reconcileHandler } = await import('../../functions/reconcile/handler.ts');
  const base = reconcileDepsFromEnvironment({ runId: 'fleet-demo', log });
  const lambda: SimLambda<ReconcileTrigger> = new SimLambda(3, async (event) => {
    const runId = randomUUID();
    const deps: ReconcileDeps = {
      ...base,
      runId,
      retryTimer: scheduler,
      reconcileNow: async (names) => {
        for (const delivery of names) lambda.invoke({ delivery });
      },
    };
    const answer = await reconcileHandler(() => deps)(event, { awsRequestId: runId });
    if (Array.isArray(answer)) answer.forEach(report);
  });
  const scheduler = simScheduler((delivery) => lambda.invoke({ delivery }), 1_000);
  return {
    pushed: (repository, tag) =>
      lambda.invoke(ecrPushEvent(repository, tag, process.env.AWS_REGION ?? 'us-east-1')),
    stop: async () => {
      scheduler.cancel();
      await lambda.drained();
    },
  };
}
