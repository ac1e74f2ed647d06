import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { createOneTimeSchedule, type OneTimeScheduleTarget } from '../aws/one-time-schedule.ts';
import type { WindowTimer } from './requests.ts';

/** Reconciles deliveries by invoking the reconcile function asynchronously, one event per delivery. */
export function lambdaReconcileNow(
  lambda: LambdaClient,
  functionName: string,
): (deliveries: readonly string[]) => Promise<void> {
  return async (deliveries) => {
    await Promise.all(
      deliveries.map((delivery) =>
        lambda.send(
          new InvokeCommand({
            FunctionName: functionName,
            InvocationType: 'Event',
            Payload: Buffer.from(JSON.stringify({ delivery })),
          }),
        ),
      ),
    );
  };
}

/**
 * One-time EventBridge Scheduler schedules at a window's end that send `{"gateOpened": gate}` to
 * the reconcile function. The delivery interval is the backstop if one is missed: gate state is
 * computed, not scheduled.
 */
export function schedulerWindowTimer(scheduler: SchedulerClient, target: OneTimeScheduleTarget): WindowTimer {
  return {
    async reopenAt(gate, at) {
      await createOneTimeSchedule(scheduler, target, {
        prefix: gate,
        at,
        input: { gateOpened: gate },
        description: `sluice: gate '${gate}' reopens; reconcile the deliveries waiting on it`,
      });
    },
  };
}
