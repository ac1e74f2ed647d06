// Alarm gates on the real components (DynamoDB Local, the kube-apiserver, the CloudWatch stand-in):
// a gate is closed while an alarm it names is in ALARM (INSUFFICIENT_DATA as configured), missing
// or unreadable; an open request cannot lift it; a change freeze still corrects drift meanwhile.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { createAlarm, setAlarmState } from '../../support/alarms.ts';
import { sluice } from '../../support/cli.ts';
import { pushFiles, run } from '../../support/deliveries.ts';
import { configMapValue, configMapYaml, inProcessGateDeps, gatedDelivery } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

/** A delivery of one ConfigMap in a fresh namespace, behind a fresh gate naming `alarms`. */
async function setup(gateSpec: Record<string, unknown>, blocks: 'all' | 'revisions' = 'all') {
  const { clock, deps, gate, delivery, ns, repository } = await gatedDelivery(bed, {
    start: '2026-11-27T10:00:00Z',
    gate: { default: 'open', ...gateSpec },
    blocks,
    names: { gate: 'alarm-gate', delivery: 'alarmed', repository: 'alarms/app' },
  });
  const push = (value: string) =>
    pushFiles(bed, repository, 'main', { 'cm.yaml': configMapYaml('app', ns, value) });
  const applied = () => configMapValue(core, 'app', ns);
  return { clock, deps, gate, delivery, ns, push, applied };
}

describe('an alarm gate', () => {
  it('holds while its alarm is in ALARM, naming the alarm, and lets the revision through once it is OK', async () => {
    const alarm = await createAlarm('ALARM');
    const { deps, gate, delivery, push, applied } = await setup({ alarms: [alarm] });
    await push('v1');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(`waiting for gate '${gate}' (closed by alarm '${alarm}' in ALARM since`);
    expect(await applied()).toBeUndefined();
    expect((await getStatus(deps.db, delivery))?.blockedBy).toEqual([
      expect.objectContaining({
        name: gate,
        closedByAlarms: [expect.objectContaining({ alarm, state: 'ALARM' })],
      }),
    ]);

    await setAlarmState(alarm, 'OK');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v1');
  });

  it('is not lifted by an open request: like a close, the alarm holds until it clears', async () => {
    const alarm = await createAlarm('ALARM');
    const { deps, gate, delivery, push, applied } = await setup({ default: 'closed', alarms: [alarm] });
    await push('v1');
    const gateDeps = inProcessGateDeps(deps);
    const opened = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', requestedBy: 'alice', reason: 'ship it' }),
      gateDeps,
    );
    expect(opened.status.state).toBe('open'); // by its requests…
    // …and the answer says what a delivery meets: closed, and why.
    expect(opened.effective).toMatchObject({ state: 'closed', cause: 'alarm' });
    expect(opened.message).toMatch(
      new RegExp(
        `^recorded: gate '${gate}' is open \\(open by alice \\(unverified\\): ship it\\); the gate stays closed: alarm '${alarm}' in ALARM since `,
      ),
    );
    expect(gateDeps.reconciled).toEqual([expect.objectContaining({ delivery, outcome: 'Blocked' })]);
    expect(await applied()).toBeUndefined(); // …but the alarm holds

    const report = await gateStatus(gate, gateDeps);
    expect(report.closedByAlarms).toEqual([expect.objectContaining({ alarm, state: 'ALARM' })]);
    const status = await handleGateEvent(parseGateEvent({ gate, action: 'status' }), gateDeps);
    expect(status.message).toMatch(
      new RegExp(`^closed by alarm '${alarm}' in ALARM since .*; by its requests: gate '${gate}' is open`),
    );

    await setAlarmState(alarm, 'OK');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v1');
  });

  it('`sluice gate open` answers what it recorded, and that the alarm keeps the gate closed', async () => {
    const alarm = await createAlarm('ALARM');
    const { gate } = await setup({ default: 'closed', alarms: [alarm] });
    const cli = await sluice('gate', 'open', gate, '--by', 'bob', '--reason', 'CHG-7');
    expect(cli.stdout).toMatch(
      new RegExp(
        `^recorded: gate '${gate}' is open \\(open by bob \\(unverified\\): CHG-7\\); the gate stays closed: alarm '${alarm}' in ALARM since `,
      ),
    );
    const json = await sluice('gate', 'open', gate, '--by', 'bob', '--reason', 'CHG-8', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: { state: 'open' },
      effective: { state: 'closed', cause: 'alarm' },
    });
  });

  it('treats INSUFFICIENT_DATA as closed by default, and as open with insufficientData: open', async () => {
    const alarm = await createAlarm('INSUFFICIENT_DATA');
    const closed = await setup({ alarms: [alarm] });
    await closed.push('v1');
    const held = await run(closed.delivery, closed.deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(`alarm '${alarm}' has no data yet (INSUFFICIENT_DATA since `);
    // Not a planned hold: the blocked-too-long alarm counts it.
    expect(held.planned).toBeUndefined();
    // `sluice status` says so, and what to do.
    const status = await sluice('status', closed.delivery);
    expect(status.stdout).toContain(`alarm '${alarm}' has no data yet`);
    expect(status.stdout).toContain(
      "give the alarm treatMissingData notBreaching, or the gate insufficientData: 'open'",
    );

    const open = await setup({ alarms: [alarm], insufficientData: 'open' });
    await open.push('v1');
    expect(await run(open.delivery, open.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await open.applied()).toBe('v1');
  });

  it('holds while an alarm it names does not exist, and says so', async () => {
    const missing = uniqueName('no-such-alarm');
    const ok = await createAlarm('OK');
    const { deps, delivery, push, applied } = await setup({ alarms: [ok, missing] });
    await push('v1');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(`alarm '${missing}' does not exist`);
    expect(held.message).not.toContain(`alarm '${ok}'`);
    expect(await applied()).toBeUndefined();
  });

  it('holds for an alarm ARN of another region, naming the one it found here', async () => {
    const alarm = await createAlarm('OK');
    const elsewhere = `arn:aws:cloudwatch:eu-west-1:000000000000:alarm:${alarm}`;
    const { deps, delivery, push } = await setup({ alarms: [elsewhere] });
    await push('v1');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked' });
    expect(held.message).toContain(
      `the alarm of that name here is arn:aws:cloudwatch:us-east-1:000000000000:alarm:${alarm}`,
    );
  });

  it('holds when the alarms cannot be read, with the error', async () => {
    const alarm = await createAlarm('OK');
    const { deps, delivery, push } = await setup({ alarms: [alarm] });
    await push('v1');
    const failing = {
      ...deps,
      alarmStates: {
        readAlarms: () =>
          Promise.reject(
            Object.assign(new Error('User is not authorized to perform: cloudwatch:DescribeAlarms'), {
              name: 'AccessDenied',
            }),
          ),
      },
    };
    const held = await run(delivery, failing);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(
      `alarm '${alarm}' could not be read: AccessDenied: User is not authorized`,
    );
    const { alarmStates: _, ...without } = deps;
    expect((await run(delivery, without)).message).toContain('no CloudWatch client is configured here');
  });

  it('blocks: revisions keeps correcting drift while the alarm holds the new revision', async () => {
    const alarm = await createAlarm('OK');
    const { deps, delivery, ns, push, applied } = await setup({ alarms: [alarm] }, 'revisions');
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    await setAlarmState(alarm, 'ALARM');
    await push('v2');
    await core.deleteNamespacedConfigMap({ name: 'app', namespace: ns });
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toMatch(/^re-applied .* \(drift corrected\); revision .* is held: waiting for gate/);
    expect(await applied()).toBe('v1');

    await setAlarmState(alarm, 'OK');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');
  });
});
