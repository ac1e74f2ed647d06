import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';

/** Where sluice's one-time schedules go and what they invoke. */
export interface OneTimeScheduleTarget {
  /** The schedule group one-time schedules are created in. */
  readonly group: string;
  /** The function the schedule invokes (the reconcile function). */
  readonly functionArn: string;
  /** The role EventBridge Scheduler assumes to invoke it. */
  readonly roleArn: string;
  /** The SQS queue a firing that could not invoke the function goes to (the failure queue). */
  readonly deadLetterArn?: string;
}

/** Scheduler's retries of a one-time schedule's invocation, within its first hour. */
export const ONE_TIME_RETRY_POLICY = { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 };

/** `sre-approval` at 2026-03-26T11:00:00Z → `sre-approval-1774522800` (Scheduler names: ≤ 64 characters). */
export function oneTimeScheduleName(prefix: string, at: Date): string {
  return `${prefix.slice(0, 52)}-${Math.floor(at.getTime() / 1000)}`;
}

/**
 * A one-time EventBridge Scheduler schedule (`at(...)`, deleted after it fires) that invokes the
 * target with `input` at the first whole minute not before `at` (Scheduler fires within the
 * minute given), retried for an hour and then sent to the failure queue when it cannot invoke it.
 * A schedule of the same name already there counts as created. Returns that minute.
 */
export async function createOneTimeSchedule(
  scheduler: SchedulerClient,
  target: OneTimeScheduleTarget,
  schedule: {
    readonly prefix: string;
    readonly at: Date;
    readonly input: unknown;
    readonly description: string;
  },
): Promise<Date> {
  const minute = new Date(Math.ceil(schedule.at.getTime() / 60_000) * 60_000);
  try {
    await scheduler.send(
      new CreateScheduleCommand({
        Name: oneTimeScheduleName(schedule.prefix, minute),
        GroupName: target.group,
        ScheduleExpression: `at(${minute.toISOString().slice(0, 19)})`,
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Description: schedule.description,
        Target: {
          Arn: target.functionArn,
          RoleArn: target.roleArn,
          Input: JSON.stringify(schedule.input),
          RetryPolicy: ONE_TIME_RETRY_POLICY,
          ...(target.deadLetterArn && { DeadLetterConfig: { Arn: target.deadLetterArn } }),
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error;
  }
  return minute;
}
