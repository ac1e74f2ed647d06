// Gates no failure can open, on the real components: a schedule whose invocation never arrived
// still closes its gate, a stored request that cannot be evaluated closes only its own gate, and
// a new request replaces it.
import { CoreV1Api } from '@kubernetes/client-node';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateKey, type TableClient } from '../../../functions/core/store/table-client.ts';
import { pushFiles, run } from '../../support/deliveries.ts';
import {
  configMapValue,
  configMapYaml,
  inProcessGateDeps,
  gatedDelivery as freshGatedDelivery,
} from '../../support/gates.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

const configMap = configMapYaml;
const valueOf = (name: string, ns: string) => configMapValue(core, name, ns);

async function gatedDelivery(start: string, gateSpec: Record<string, unknown>) {
  const { clock, deps, gate, delivery, ns, repository } = await freshGatedDelivery(bed, {
    start,
    gate: gateSpec,
    names: { gate: 'gate', delivery: 'gated', repository: 'gates/app' },
  });
  const push = (value: string) =>
    pushFiles(bed, repository, 'main', { 'cm.yaml': configMap('app', ns, value) });
  return { clock, deps, gate, delivery, ns, push, gateDeps: inProcessGateDeps(deps) };
}

/** Writes a gate's last request straight into the table, as a hand edit or an older version would. */
async function storeByHand(db: TableClient, gate: string, request: object, requestedAtMs: number) {
  await db.doc.send(
    new PutCommand({
      TableName: db.table,
      Item: { pk: gateKey(gate), sk: 'request', request, requestedAtMs },
    }),
  );
}

const NO_DEPLOY_FRIDAY = {
  default: 'open',
  schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close', window: '24h' }],
};

describe('a schedule whose invocation was lost', () => {
  it('still closes its gate for its window: the delivery is held, and sluice gates agrees', async () => {
    // Thursday: open. No schedule invocation is ever sent in this test.
    const { clock, deps, gate, delivery, ns, push, gateDeps } = await gatedDelivery(
      '2026-11-26T12:00:00Z',
      NO_DEPLOY_FRIDAY,
    );
    await push('thursday');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });

    clock.set('2026-11-27T09:00:00Z'); // Friday 10:00 in Berlin
    await push('friday');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toBe(`waiting for gate '${gate}' (closed; opens at 2026-11-27T23:00:00Z)`);
    expect(await valueOf('app', ns)).toBe('thursday');

    const { status, nextChange } = await gateStatus(gate, gateDeps);
    expect(status).toMatchObject({
      state: 'closed',
      byRequest: true,
      since: '2026-11-26T23:00:00.000Z',
      until: '2026-11-27T23:00:00.000Z',
      lastRequest: { action: 'close', requestedBy: `schedule/${gate}/0`, source: 'schedule' },
    });
    expect(nextChange).toMatchObject({ at: '2026-11-27T23:00:00.000Z', state: 'open', cause: 'window' });
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();

    clock.set('2026-11-28T09:00:00Z'); // Saturday
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await valueOf('app', ns)).toBe('friday');
  });

  it('a manual open recorded before the firing does not survive it; one after the firing does', async () => {
    const { clock, deps, gate, delivery, push, gateDeps } = await gatedDelivery(
      '2026-11-26T22:00:00Z',
      NO_DEPLOY_FRIDAY,
    );
    await push('v1');
    const open = (by: string) =>
      handleGateEvent(
        parseGateEvent({ gate, action: 'open', window: '48h', requestedBy: by, source: 'cli' }),
        gateDeps,
      );
    await open('early-bird'); // Thursday 23:00 Berlin, an hour before the freeze
    clock.set('2026-11-27T09:00:00Z');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked' });

    const emergency = await open('incident-commander');
    expect(emergency.status).toMatchObject({
      state: 'open',
      lastRequest: { requestedBy: 'incident-commander' },
    });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
  });

  it('when the late invocation does arrive, it is recorded for the audit trail and starts the catch-up', async () => {
    const { clock, deps, gate, delivery, push, gateDeps } = await gatedDelivery('2026-11-23T06:00:00Z', {
      default: 'closed',
      schedules: [{ cron: '0 8 ? * MON-FRI *', timeZone: 'UTC', action: 'open', window: '8h' }],
    });
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked' });
    clock.set('2026-11-23T08:20:00Z'); // the 08:00 invocation is 20 minutes late
    const late = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', source: 'schedule', requestedAt: '2026-11-23T08:00:00Z' }),
      gateDeps,
    );
    expect(late).toMatchObject({ outcome: 'accepted', reconciling: [delivery] });
    expect(gateDeps.reconciled).toEqual([expect.objectContaining({ delivery, outcome: 'Succeeded' })]);
    expect((await listGateAudit(deps.db, gate))[0]).toMatchObject({
      requestedAt: '2026-11-23T08:00:00.000Z',
      source: 'schedule',
      outcome: 'accepted',
      recordedAt: '2026-11-23T08:20:00.000Z',
    });
  });
});

describe('a stored request that cannot be evaluated', () => {
  const junk: [string, Record<string, unknown>][] = [
    ['a window of 99999999 days (from before windows were bounded)', { windowMs: 99_999_999 * 86_400_000 }],
    ['a time that is not a time', { requestedAt: 'soon' }],
    ['an action that is not one', { action: 'unlock' }],
  ];

  it.each(junk)('%s closes only its own gate, and a new request replaces it', async (_, fields) => {
    const { deps, gate, delivery, push, gateDeps } = await gatedDelivery('2026-06-01T12:00:00Z', {
      default: 'open',
    });
    const other = await gatedDelivery('2026-06-01T12:00:00Z', { default: 'open' });
    const request = {
      action: 'close',
      requestedAt: '2026-06-01T11:00:00.000Z',
      requestedBy: 'someone',
      reason: '',
      source: 'cli',
      ...fields,
    };
    await storeByHand(deps.db, gate, request, Date.parse('2026-06-01T11:00:00Z'));

    const { status } = await gateStatus(gate, gateDeps);
    expect(status.state).toBe('closed');
    expect(status.problem).toMatch(/^the stored .* request by someone cannot be evaluated: its /);
    await push('v1');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(`waiting for gate '${gate}' (closed: the stored`);

    await other.push('v1');
    expect(await run(other.delivery, other.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect((await gateStatus(other.gate, other.gateDeps)).status.state).toBe('open');

    const replaced = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', window: '1h', requestedBy: 'fixer', source: 'cli' }),
      gateDeps,
    );
    expect(replaced).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect(replaced.status.problem).toBeUndefined();
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
  });

  it('a stored request dated far in the future does not make every new request stale', async () => {
    const { deps, gate, gateDeps } = await gatedDelivery('2026-06-01T12:00:00Z', { default: 'open' });
    const future = '2099-01-01T00:00:00.000Z';
    const request = {
      action: 'open',
      requestedAt: future,
      requestedBy: 'clock-ahead',
      reason: '',
      source: 'cli',
    };
    await storeByHand(deps.db, gate, request, Date.parse(future));
    const close = await handleGateEvent(
      parseGateEvent({ gate, action: 'close', requestedBy: 'oncall', source: 'cli' }),
      gateDeps,
    );
    expect(close).toMatchObject({ outcome: 'accepted', status: { state: 'closed' } });
    expect(await getGateRequest(deps.db, gate)).toMatchObject({ requestedBy: 'oncall' });
  });
});
