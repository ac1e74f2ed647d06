// One-time schedules (a gate's reopening, a delivery's retry) against a Scheduler stand-in
// (test/support/aws-recorder.ts) that holds what was created, answers a taken name with
// ConflictException and GetSchedule with the schedule it holds, as Scheduler does.
import { CreateScheduleCommand, GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OneTimeScheduleConflict,
  oneTimeScheduleName,
  type OneTimeScheduleTarget,
} from '../../../functions/core/aws/one-time-schedule.ts';
import { schedulerRetryTimer, schedulerWindowTimer } from '../../../functions/core/aws/scheduler-timers.ts';
import { startAwsRecorder } from '../../support/aws-recorder.ts';
import { uniqueName } from '../../support/testbed.ts';

let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;
let scheduler: SchedulerClient;
const target: OneTimeScheduleTarget = {
  group: 'sluice-one-time',
  functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:sluice-reconcile',
  roleArn: 'arn:aws:iam::000000000000:role/sluice-scheduler',
  deadLetterArn: 'arn:aws:sqs:us-east-1:000000000000:sluice-failures',
};
const at = new Date('2026-06-01T12:00:30Z');
const minute = new Date('2026-06-01T12:01:00Z');

beforeAll(async () => {
  recorder = await startAwsRecorder();
  scheduler = new SchedulerClient({
    endpoint: recorder.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
});
afterAll(async () => {
  await recorder.stop();
});

const created = (before: number) =>
  recorder.requests
    .slice(before)
    .filter((r) => r.method === 'POST' && r.path.startsWith('/schedules/'))
    .map((r) => decodeURIComponent(r.path.slice('/schedules/'.length)));

/** Creates, as someone else would, a schedule of the given name in sluice's group. */
function takeName(
  name: string,
  schedule: { expression: string; input: unknown; functionArn?: string; description?: string },
) {
  return scheduler.send(
    new CreateScheduleCommand({
      Name: name,
      GroupName: target.group,
      ScheduleExpression: schedule.expression,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ...(schedule.description && { Description: schedule.description }),
      Target: {
        Arn: schedule.functionArn ?? target.functionArn,
        RoleArn: target.roleArn,
        Input: JSON.stringify(schedule.input),
      },
    }),
  );
}

async function inputOf(name: string): Promise<unknown> {
  const schedule = await scheduler.send(new GetScheduleCommand({ Name: name, GroupName: target.group }));
  return JSON.parse(schedule.Target!.Input!);
}

describe('one-time schedule names', () => {
  it("gate 'retry-<x>' reopening and delivery '<x>' retrying in the same minute get a schedule each", async () => {
    const delivery = uniqueName('app');
    const before = recorder.requests.length;
    await schedulerWindowTimer(scheduler, target).reopenAt(`retry-${delivery}`, at);
    await schedulerRetryTimer(scheduler, target).retryAt(delivery, at);

    const names = created(before);
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
    expect(await inputOf(names[0]!)).toEqual({ gateOpened: `retry-${delivery}` });
    expect(await inputOf(names[1]!)).toEqual({ delivery });
  });

  it('two gates sharing a 60-character prefix get a schedule each, named within 64 characters', async () => {
    const prefix = uniqueName('long').padEnd(60, 'x');
    const [first, second] = [`${prefix}-a`, `${prefix}-b`];
    const before = recorder.requests.length;
    await schedulerWindowTimer(scheduler, target).reopenAt(first, at);
    await schedulerWindowTimer(scheduler, target).reopenAt(second, at);

    const names = created(before);
    expect(new Set(names).size).toBe(2);
    for (const name of names) expect(name).toMatch(/^gate-[a-z0-9-]+-1780315260-[0-9a-f]{16}$/);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(64);
    expect(await inputOf(names[0]!)).toEqual({ gateOpened: first });
    expect(await inputOf(names[1]!)).toEqual({ gateOpened: second });
  });

  it('keeps the readable part of a short name whole', () => {
    expect(oneTimeScheduleName({ kind: 'gate', name: 'sre-approval' }, minute)).toMatch(
      /^gate-sre-approval-1780315260-[0-9a-f]{16}$/,
    );
    expect(oneTimeScheduleName({ kind: 'retry', name: 'sre-approval' }, minute)).toMatch(
      /^retry-sre-approval-1780315260-[0-9a-f]{16}$/,
    );
  });
});

describe('a schedule name already taken', () => {
  it('by the same schedule (a second request for the same reopening) counts as created', async () => {
    const gate = uniqueName('again');
    const timer = schedulerWindowTimer(scheduler, target);
    const before = recorder.requests.length;
    await timer.reopenAt(gate, at);
    await timer.reopenAt(gate, new Date('2026-06-01T12:00:45Z'));

    const name = oneTimeScheduleName({ kind: 'gate', name: gate }, minute);
    expect(created(before)).toEqual([name, name]);
    const read = recorder.requests.slice(before).filter((r) => r.method === 'GET');
    expect(read.map((r) => decodeURIComponent(r.path))).toEqual([
      `/schedules/${name}?groupName=${target.group}`,
    ]);
  });

  it('by a schedule with another payload fails, naming both; the existing one is left as it was', async () => {
    const gate = uniqueName('taken');
    const name = oneTimeScheduleName({ kind: 'gate', name: gate }, minute);
    await takeName(name, {
      expression: 'at(2026-06-01T12:01:00)',
      input: { delivery: 'other' },
      description: 'someone else',
    });

    const reopen = schedulerWindowTimer(scheduler, target).reopenAt(gate, at);
    await expect(reopen).rejects.toThrow(OneTimeScheduleConflict);
    await expect(schedulerWindowTimer(scheduler, target).reopenAt(gate, at)).rejects.toThrow(
      `one-time schedule '${name}' (group 'sluice-one-time') is taken by another schedule, so "sluice: gate '${gate}' reopens; reconcile the deliveries waiting on it" was not scheduled: ` +
        `the existing schedule ("someone else") invokes ${target.functionArn} with {"delivery":"other"} at at(2026-06-01T12:01:00) (UTC); ` +
        `the new one would invoke ${target.functionArn} with {"gateOpened":"${gate}"} at at(2026-06-01T12:01:00) (UTC)`,
    );
    expect(await inputOf(name)).toEqual({ delivery: 'other' });
  });

  it('by a schedule for another time or function fails too', async () => {
    const delivery = uniqueName('other');
    const name = oneTimeScheduleName({ kind: 'retry', name: delivery }, minute);
    await takeName(name, { expression: 'at(2026-06-01T13:01:00)', input: { delivery } });
    await expect(schedulerRetryTimer(scheduler, target).retryAt(delivery, at)).rejects.toThrow(
      /is taken by another schedule.* at at\(2026-06-01T13:01:00\) \(UTC\); the new one would .* at at\(2026-06-01T12:01:00\)/,
    );

    const elsewhere = uniqueName('elsewhere');
    const otherName = oneTimeScheduleName({ kind: 'retry', name: elsewhere }, minute);
    await takeName(otherName, {
      expression: 'at(2026-06-01T12:01:00)',
      input: { delivery: elsewhere },
      functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:another',
    });

    await expect(schedulerRetryTimer(scheduler, target).retryAt(elsewhere, at)).rejects.toThrow(
      /invokes arn:aws:lambda:us-east-1:000000000000:function:another with/,
    );
  });
});
