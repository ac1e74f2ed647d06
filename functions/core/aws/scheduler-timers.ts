import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { WindowTimer } from '../gates/requests.ts';
import type { RetryTimer } from '../reconcile/retry.ts';
import { createOneTimeSchedule, type OneTimeScheduleTarget } from './one-time-schedule.ts';

/**
 * One-time EventBridge Scheduler schedules at a window's end that send `{"gateOpened": gate}` to
 * the reconcile function. The delivery interval is the backstop if one is missed: gate state is
 * computed, not scheduled.
 */
export function schedulerWindowTimer(scheduler: SchedulerClient, target: OneTimeScheduleTarget): WindowTimer {
  return {
    async reopenAt(gate, at) {
      await createOneTimeSchedule(scheduler, target, {
        kind: 'gate',
        name: gate,
        at,
        input: { gateOpened: gate },
        description: `sluice: gate '${gate}' reopens; reconcile the deliveries waiting on it`,
      });
    },
  };
}

/** Retries as one-time EventBridge Scheduler schedules that send `{"delivery": name}` to the reconcile function. */
export function schedulerRetryTimer(scheduler: SchedulerClient, target: OneTimeScheduleTarget): RetryTimer {
  return {
    retryAt: (delivery, at) =>
      createOneTimeSchedule(scheduler, target, {
        kind: 'retry',
        name: delivery,
        at,
        input: { delivery },
        description: `sluice: retry the failed delivery '${delivery}' (retryInterval)`,
      }),
  };
}
