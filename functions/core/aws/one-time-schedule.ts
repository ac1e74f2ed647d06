import {
  ConflictException,
  CreateScheduleCommand,
  GetScheduleCommand,
  ResourceNotFoundException,
  type GetScheduleCommandOutput,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

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

/** What a one-time schedule is for: a gate's reopening at its window's end, or a delivery's retry. */
export interface OneTimeSchedulePurpose {
  readonly kind: 'gate' | 'retry';
  /** The gate's or the delivery's full name. */
  readonly name: string;
}

/** Scheduler's retries of a one-time schedule's invocation, within its first hour. */
export const ONE_TIME_RETRY_POLICY = { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 };

/** Scheduler's longest schedule name. */
const MAX_NAME = 64;
/** Hex digits of the hash in a name: 64 bits, so two purposes sharing a name is not a practical event. */
const HASH_DIGITS = 16;

/**
 * Gate `sre-approval` reopening at 2026-03-26T11:00:00Z → `gate-sre-approval-1774522800-<16 hex>`.
 * The hash is of the kind, the full name and the minute, so the name is unique per target even
 * where the readable part is cut to fit Scheduler's 64 characters, and a gate and a delivery of
 * the same name never share one.
 */
export function oneTimeScheduleName(purpose: OneTimeSchedulePurpose, minute: Date): string {
  const seconds = Math.floor(minute.getTime() / 1000);
  const hash = createHash('sha256')
    .update(JSON.stringify([purpose.kind, purpose.name, seconds]))
    .digest('hex')
    .slice(0, HASH_DIGITS);
  const suffix = `-${seconds}-${hash}`;
  return `${`${purpose.kind}-${purpose.name}`.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}

/** A one-time schedule's name is taken by a schedule that does something else; nothing was created. */
export class OneTimeScheduleConflict extends Error {
  override readonly name = 'OneTimeScheduleConflict';
}

/**
 * A one-time EventBridge Scheduler schedule (`at(...)`, deleted after it fires) that invokes the
 * target with `input` at the first whole minute not before `at` (Scheduler fires within the
 * minute given), retried for an hour and then sent to the failure queue when it cannot invoke it.
 * A schedule of the same name already there counts as created only when it invokes the same
 * function with the same input at the same time; any other throws OneTimeScheduleConflict,
 * naming both. Returns the minute.
 */
export async function createOneTimeSchedule(
  scheduler: SchedulerClient,
  target: OneTimeScheduleTarget,
  schedule: OneTimeSchedulePurpose & {
    readonly at: Date;
    readonly input: unknown;
    readonly description: string;
  },
): Promise<Date> {
  const minute = new Date(Math.ceil(schedule.at.getTime() / 60_000) * 60_000);
  const name = oneTimeScheduleName(schedule, minute);
  const expression = `at(${minute.toISOString().slice(0, 19)})`;
  const input = JSON.stringify(schedule.input);
  // A schedule that fired is deleted: one found taken, then gone by the time it is read, is created again.
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      await scheduler.send(
        new CreateScheduleCommand({
          Name: name,
          GroupName: target.group,
          ScheduleExpression: expression,
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Description: schedule.description,
          Target: {
            Arn: target.functionArn,
            RoleArn: target.roleArn,
            Input: input,
            RetryPolicy: ONE_TIME_RETRY_POLICY,
            ...(target.deadLetterArn && { DeadLetterConfig: { Arn: target.deadLetterArn } }),
          },
        }),
      );
      return minute;
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
    }
    const existing = await getSchedule(scheduler, target.group, name);
    if (!existing) continue;
    if (
      existing.Target?.Arn === target.functionArn &&
      sameJson(existing.Target.Input, input) &&
      existing.ScheduleExpression === expression &&
      (existing.ScheduleExpressionTimezone ?? 'UTC') === 'UTC'
    )
      return minute;
    throw new OneTimeScheduleConflict(
      `one-time schedule '${name}' (group '${target.group}') is taken by another schedule, so "${schedule.description}" was not scheduled: ` +
        `the existing schedule ("${existing.Description ?? ''}") invokes ${existing.Target?.Arn} with ${existing.Target?.Input} at ${existing.ScheduleExpression} (${existing.ScheduleExpressionTimezone ?? 'UTC'}); ` +
        `the new one would invoke ${target.functionArn} with ${input} at ${expression} (UTC)`,
    );
  }
  throw new OneTimeScheduleConflict(
    `one-time schedule '${name}' (group '${target.group}') was reported taken but could not be read, twice, so "${schedule.description}" was not scheduled`,
  );
}

async function getSchedule(
  scheduler: SchedulerClient,
  group: string,
  name: string,
): Promise<GetScheduleCommandOutput | undefined> {
  try {
    return await scheduler.send(new GetScheduleCommand({ Name: name, GroupName: group }));
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

function sameJson(stored: string | undefined, expected: string): boolean {
  if (stored === undefined) return false;
  try {
    return isDeepStrictEqual(JSON.parse(stored), JSON.parse(expected));
  } catch {
    return false;
  }
}
