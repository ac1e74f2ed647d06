// The gate Lambda handler, invoked as Lambda invokes it: DynamoDB Local for state, and the
// Lambda/Scheduler calls it makes checked on the wire.
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneTimeScheduleName } from '../../../functions/core/aws/one-time-schedule.ts';
import type { GateRequestResult } from '../../../functions/core/gates/requests.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { handler } from '../../../functions/gate/handler.ts';
import { oneTimeScheduleBody, startAwsRecorder } from '../../support/aws-recorder.ts';
import { engineDeps, registerDelivery } from '../../support/deliveries.ts';
import { registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const invoke = async (event: object) => (await handler(event)) as GateRequestResult;
const deps = engineDeps();
const RECONCILE_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:sluice-reconcile';
const FAILURE_QUEUE = 'arn:aws:sqs:us-east-1:000000000000:sluice-failures';
let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;

beforeAll(async () => {
  recorder = await startAwsRecorder();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_LAMBDA: recorder.url,
    AWS_ENDPOINT_URL_SCHEDULER: recorder.url,
    AWS_ENDPOINT_URL_EVENTBRIDGE: recorder.url,
    SLUICE_EVENT_BUS: 'platform-events',
    SLUICE_RECONCILE_FUNCTION: RECONCILE_ARN,
    SLUICE_WINDOW_SCHEDULE_GROUP: 'sluice-windows',
    SLUICE_SCHEDULER_ROLE_ARN: 'arn:aws:iam::000000000000:role/sluice-scheduler',
    SLUICE_FAILURE_QUEUE_ARN: FAILURE_QUEUE,
  });
});
afterAll(async () => {
  await recorder.stop();
});

describe('gate handler', () => {
  it('opening a gate invokes the reconcile function asynchronously for each delivery using it', async () => {
    const gate = uniqueName('approval');
    await registerGate(deps, { name: gate, default: 'closed', window: '1h' });
    const [first, second, unrelated] = [uniqueName('a'), uniqueName('b'), uniqueName('c')];
    await registerDelivery(deps, bed, { name: first, repository: 'x/a', gates: [{ name: gate }] });
    await registerDelivery(deps, bed, {
      name: second,
      repository: 'x/b',
      gates: [{ name: gate, blocks: 'revisions' }],
    });
    await registerDelivery(deps, bed, { name: unrelated, repository: 'x/c' });
    const before = recorder.requests.length;

    const result = await invoke({ gate, action: 'open', reason: 'CHG-1234', requestedBy: 'alice' });
    expect(result).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect([...result.reconciling].sort()).toEqual([first, second].sort());

    const invokes = recorder.requests.slice(before).filter((r) => r.path.includes('/invocations'));
    expect(invokes.map((r) => decodeURIComponent(r.path))).toEqual([
      `/2015-03-31/functions/${RECONCILE_ARN}/invocations`,
      `/2015-03-31/functions/${RECONCILE_ARN}/invocations`,
    ]);
    expect(invokes.map((r) => r.headers['x-amz-invocation-type'])).toEqual(['Event', 'Event']);

    const events = recorder.requests
      .slice(before)
      .filter((r) => r.headers['x-amz-target'] === 'AWSEvents.PutEvents');
    const entry = (JSON.parse(events[0]!.body) as { Entries: Record<string, string>[] }).Entries[0]!;
    expect(entry).toMatchObject({
      EventBusName: 'platform-events',
      Source: 'sluice',
      DetailType: 'Gate Opened',
    });
    expect(JSON.parse(entry.Detail!)).toMatchObject({
      gate,
      state: 'open',
      request: { action: 'open', requestedBy: 'alice', reason: 'CHG-1234', source: 'console' },
    });
    expect(invokes.map((r) => (JSON.parse(r.body) as { delivery: string }).delivery).sort()).toEqual(
      [first, second].sort(),
    );
  });

  it('a close request with a window sets a one-time schedule for when the gate reopens', async () => {
    const gate = uniqueName('maint');
    await registerGate(deps, { name: gate, default: 'open', window: '24h' });
    const before = recorder.requests.length;
    const result = await invoke({
      gate,
      action: 'close',
      window: '2h',
      reason: 'DB upgrade',
      requestedBy: 'bob',
    });
    const until = Date.parse(result.status.until!);

    const created = recorder.requests.slice(before).filter((r) => r.path.startsWith('/schedules/'));
    expect(created).toHaveLength(1);
    const body = JSON.parse(created[0]!.body) as Record<string, unknown>;
    const minute = new Date(Math.ceil(until / 60_000) * 60_000);
    expect(decodeURIComponent(created[0]!.path)).toBe(
      `/schedules/${oneTimeScheduleName({ kind: 'gate', name: gate }, minute)}`,
    );
    expect(body).toMatchObject(
      oneTimeScheduleBody(minute, {
        group: 'sluice-windows',
        functionArn: RECONCILE_ARN,
        roleArn: 'arn:aws:iam::000000000000:role/sluice-scheduler',
        input: { gateOpened: gate },
        deadLetterArn: FAILURE_QUEUE,
      }),
    );
  });

  it('a window end whose schedule name another schedule holds fails the invocation loudly, naming both', async () => {
    const gate = uniqueName('taken');
    await registerGate(deps, { name: gate, default: 'open', window: '24h' });
    // Taken for each minute the window could end in, whenever the request lands.
    const end = Math.ceil((Date.now() + 7_200_000) / 60_000) * 60_000;
    const scheduler = new SchedulerClient({ endpoint: recorder.url });
    for (const minute of [new Date(end), new Date(end + 60_000)]) {
      await scheduler.send(
        new CreateScheduleCommand({
          Name: oneTimeScheduleName({ kind: 'gate', name: gate }, minute),
          GroupName: 'sluice-windows',
          ScheduleExpression: `at(${minute.toISOString().slice(0, 19)})`,
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: {
            Arn: RECONCILE_ARN,
            RoleArn: 'arn:aws:iam::000000000000:role/x',
            Input: '{"delivery":"x"}',
          },
        }),
      );
    }

    await expect(invoke({ gate, action: 'close', window: '2h', requestedBy: 'bob' })).rejects.toThrow(
      new RegExp(
        `gate '${gate}': the close request was recorded, but the schedule that reconciles the waiting deliveries when it ends was not created .*is taken by another schedule.*invokes ${RECONCILE_ARN} with \\{"delivery":"x"\\}.*the new one would invoke ${RECONCILE_ARN} with \\{"gateOpened":"${gate}"\\}`,
      ),
    );
    expect(await getGateRequest(deps.db, gate)).toMatchObject({ action: 'close', requestedBy: 'bob' });
  });

  it('"status" reads without writing', async () => {
    const gate = uniqueName('ro');
    await registerGate(deps, { name: gate, default: 'closed' });
    const result = await invoke({ gate, action: 'status' });
    expect(result).toMatchObject({ outcome: 'status', status: { state: 'closed', byRequest: false } });
    expect(result.message).toBe(`gate '${gate}' is closed (default)`);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it('a console test event with a typo fails with a message naming the field', async () => {
    const gate = uniqueName('typo');
    await registerGate(deps, { name: gate, default: 'closed' });
    await expect(handler({ gate, action: 'Open' })).rejects.toThrow(
      /"action" must be "open", "close" or "status", not "Open"/,
    );
    await expect(handler({ gate, action: 'open', window: '1 hour' })).rejects.toThrow(
      /"window": "1 hour" is not a duration/,
    );
    await expect(handler('open the gate')).rejects.toThrow(/a gate event must be a JSON object like/);
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });
});
