import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { CreateScheduleCommand, ConflictException, type SchedulerClient } from '@aws-sdk/client-scheduler';
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

export interface SchedulerWindowTimerProps {
  /** The schedule group one-time schedules are created in. */
  readonly group: string;
  /** The reconcile function's ARN, which the schedule invokes with `{"gateOpened": gate}`. */
  readonly reconcileFunctionArn: string;
  /** The role EventBridge Scheduler assumes to invoke it. */
  readonly roleArn: string;
}

/** `sre-approval` at 2026-03-26T11:00:00Z → `sre-approval-1774522800` (Scheduler names: ≤ 64 characters). */
export function windowScheduleName(gate: string, at: Date): string {
  return `${gate.slice(0, 50)}-${Math.floor(at.getTime() / 1000)}`;
}

/**
 * One-time EventBridge Scheduler schedules at a window's end, deleted after they fire. The
 * delivery interval is the backstop if one is missed: gate state is computed, not scheduled.
 */
export function schedulerWindowTimer(
  scheduler: SchedulerClient,
  props: SchedulerWindowTimerProps,
): WindowTimer {
  return {
    async reopenAt(gate, at) {
      // Scheduler fires within the minute given; round up so the window has ended when it does.
      const minute = new Date(Math.ceil(at.getTime() / 60_000) * 60_000);
      try {
        await scheduler.send(
          new CreateScheduleCommand({
            Name: windowScheduleName(gate, minute),
            GroupName: props.group,
            ScheduleExpression: `at(${minute.toISOString().slice(0, 19)})`,
            ScheduleExpressionTimezone: 'UTC',
            FlexibleTimeWindow: { Mode: 'OFF' },
            ActionAfterCompletion: 'DELETE',
            Description: `sluice: gate '${gate}' reopens; reconcile the deliveries waiting on it`,
            Target: {
              Arn: props.reconcileFunctionArn,
              RoleArn: props.roleArn,
              Input: JSON.stringify({ gateOpened: gate }),
            },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConflictException)) throw error; // already set for that minute
      }
    },
  };
}
