import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { createOneTimeSchedule, type OneTimeScheduleTarget } from '../aws/one-time-schedule.ts';
import type { WindowTimer } from './requests.ts';

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
