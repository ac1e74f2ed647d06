// The four gate stories of the Gates issue, on the real components with an injected clock.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { handleGateEvent, type GateRequestResult } from '../../../functions/core/gates/requests.ts';
import { deliveriesForEvent } from '../../../functions/core/reconcile/triggers.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import {
  configMapValue,
  configMapYaml,
  inProcessGateDeps,
  manualClock,
  gatedDelivery,
} from '../../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

const configMap = configMapYaml;
const valueOf = (name: string, ns: string) => configMapValue(core, name, ns);

/** A delivery of ConfigMaps in a fresh namespace, behind one fresh gate. */
async function setup(
  start: string,
  gateSpec: Record<string, unknown>,
  blocks: 'all' | 'revisions',
): Promise<{
  clock: ReturnType<typeof manualClock>;
  deps: ReturnType<typeof engineDeps>;
  gate: string;
  delivery: string;
  ns: string;
  push: (tag: string, files: Record<string, string>) => Promise<string>;
}> {
  const { clock, deps, gate, delivery, ns, repository } = await gatedDelivery(bed, {
    start,
    gate: gateSpec,
    blocks,
    delivery: { prune: true },
    names: { gate: 'gate', delivery: 'gated', repository: 'gates/app' },
  });
  return {
    clock,
    deps,
    gate,
    delivery,
    ns,
    push: (tag, files) => pushFiles(bed, repository, tag, files),
  };
}

describe('story "SRE approval": default closed, window 1h, blocks all', () => {
  it('holds v1 until approved, applies it at once on approval, and closes again by itself after 1h', async () => {
    const { clock, deps, gate, delivery, ns, push } = await setup(
      '2026-03-26T10:00:00Z',
      { default: 'closed', window: '1h' },
      'all',
    );
    await push('main', { 'cm.yaml': configMap('app', ns, 'v1') });

    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toBe(
      `waiting for gate '${gate}' (closed; no opening scheduled: open it with sluice gate open)`,
    );
    expect(await valueOf('app', ns)).toBeUndefined();
    const blocked = await getStatus(deps.db, delivery);
    expect(blocked).toMatchObject({
      ready: false,
      reason: 'GateClosed',
      blockedBy: [{ name: gate, blocks: 'all' }],
      blockedSince: '2026-03-26T10:00:00.000Z',
    });

    clock.set('2026-03-26T10:05:00Z');
    const gateDeps = inProcessGateDeps(deps);
    const opened = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', reason: 'CHG-1234', requestedBy: 'alice', source: 'cli' }),
      gateDeps,
    );
    expect(opened).toMatchObject({ outcome: 'accepted', reconciling: [delivery] });
    expect(opened.status).toMatchObject({ state: 'open', until: '2026-03-26T11:05:00.000Z' });
    expect(opened.message).toContain(
      `gate '${gate}' is open until 2026-03-26T11:05:00Z (open by alice (unverified): CHG-1234)`,
    );
    expect(gateDeps.reconciled).toMatchObject([{ delivery, outcome: 'Succeeded' }]);
    expect(await valueOf('app', ns)).toBe('v1');
    const released = await getStatus(deps.db, delivery);
    expect(released).toMatchObject({ ready: true, reason: 'ReconciliationSucceeded' });
    expect(released?.blockedBy).toBeUndefined();
    expect(released?.blockedSince).toBeUndefined();

    await push('main', { 'cm.yaml': configMap('app', ns, 'v2') });
    clock.set('2026-03-26T11:05:00Z'); // the window has just ended; nobody closed the gate
    const heldAgain = await run(delivery, deps);
    expect(heldAgain).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(await valueOf('app', ns)).toBe('v1');
  });
});

describe('story "maintenance": default open, window 24h', () => {
  it('a close request holds every change for 24h, then the next trigger releases them', async () => {
    const { clock, deps, gate, delivery, ns, push } = await setup(
      '2026-05-04T08:00:00Z',
      { default: 'open', window: '24h' },
      'all',
    );
    await push('main', { 'cm.yaml': configMap('app', ns, 'v1') });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });

    const gateDeps = inProcessGateDeps(deps);
    const closed = await handleGateEvent(
      parseGateEvent({ gate, action: 'close', reason: 'DB maintenance', requestedBy: 'bob', source: 'cli' }),
      gateDeps,
    );
    expect(closed.status).toMatchObject({ state: 'closed', until: '2026-05-05T08:00:00.000Z' });
    expect(closed.nextChange).toMatchObject({
      at: '2026-05-05T08:00:00.000Z',
      state: 'open',
      cause: 'window',
    });
    expect(gateDeps.timers).toEqual([{ gate, at: '2026-05-05T08:00:00.000Z' }]);

    await push('main', { 'cm.yaml': configMap('app', ns, 'v2') });
    clock.set('2026-05-04T20:00:00Z');
    const held = await run(delivery, deps);
    expect(held.message).toBe(`waiting for gate '${gate}' (closed; opens at 2026-05-05T08:00:00Z)`);
    expect((await getStatus(deps.db, delivery))?.blockedBy).toEqual([
      { name: gate, blocks: 'all', opensAt: '2026-05-05T08:00:00.000Z' },
    ]);
    expect(await valueOf('app', ns)).toBe('v1');

    clock.set('2026-05-05T08:00:30Z'); // the one-time schedule fires: {"gateOpened": gate}
    expect(await deliveriesForEvent({ gateOpened: gate }, deps.db)).toEqual([delivery]);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await valueOf('app', ns)).toBe('v2');
  });
});

describe('story "No-Deploy-Friday": a schedule in Europe/Berlin', () => {
  it('the gate function, invoked as the schedule invokes it, closes the gate until Saturday', async () => {
    const { clock, deps, gate, delivery, ns, push } = await setup(
      '2026-03-26T22:59:00Z',
      {
        default: 'open',
        window: '24h',
        schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
      },
      'all',
    );
    const gateDeps = inProcessGateDeps(deps);
    const handler = gateHandler(() => gateDeps);
    const invoke = async (event: object) => (await handler(event)) as GateRequestResult;

    const before = await invoke({ gate, action: 'status' });
    expect(before.status.state).toBe('open');
    expect(before.nextChange).toEqual({
      at: '2026-03-26T23:00:00.000Z', // Friday 00:00 CET
      state: 'closed',
      cause: 'schedule',
      cron: '0 0 ? * FRI *',
    });

    clock.set('2026-03-26T23:00:20Z');
    const closed = await invoke({
      gate,
      action: 'close',
      window: '24h',
      requestedBy: 'eventbridge-scheduler',
      source: 'schedule',
      requestedAt: '2026-03-26T23:00:00Z',
    });
    expect(closed).toMatchObject({ outcome: 'accepted' });
    expect(closed.status).toMatchObject({ state: 'closed', until: '2026-03-27T23:00:00.000Z' });
    // The next close after this one is a week later, in summer time (CEST, +02:00).
    expect(closed.nextChange).toMatchObject({ at: '2026-03-27T23:00:00.000Z', state: 'open' });

    await push('main', { 'cm.yaml': configMap('app', ns, 'friday') });
    clock.set('2026-03-27T09:00:00Z');
    expect((await run(delivery, deps)).message).toBe(
      `waiting for gate '${gate}' (closed; opens at 2026-03-27T23:00:00Z)`,
    );
    expect(await valueOf('app', ns)).toBeUndefined();

    clock.set('2026-03-28T09:00:00Z');
    const saturday = await invoke({ gate, action: 'status' });
    expect(saturday.status).toMatchObject({ state: 'open', since: '2026-03-27T23:00:00.000Z' });
    expect(saturday.nextChange).toMatchObject({ at: '2026-04-02T22:00:00.000Z', state: 'closed' });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await valueOf('app', ns)).toBe('friday');
  });
});

describe('story "change freeze": blocks revisions', () => {
  it('holds a new revision but re-applies the last one, re-creating deleted objects and correcting drift', async () => {
    const { clock, deps, gate, delivery, ns, push } = await setup(
      '2026-12-18T17:00:00Z',
      { default: 'open' },
      'revisions',
    );
    await push('main', { 'a.yaml': configMap('a', ns, 'v1'), 'b.yaml': configMap('b', ns, 'v1') });
    const v1 = await run(delivery, deps);
    expect(v1).toMatchObject({ outcome: 'Succeeded' });

    const gateDeps = inProcessGateDeps(deps);
    await handleGateEvent(
      parseGateEvent({ gate, action: 'close', reason: 'year-end freeze', requestedBy: 'cab', source: 'cli' }),
      gateDeps,
    );
    const v2 = await push('main', {
      'a.yaml': configMap('a', ns, 'v2'),
      'b.yaml': configMap('b', ns, 'v1'),
      'c.yaml': configMap('c', ns, 'v2'),
    });

    await core.deleteNamespacedConfigMap({ name: 'b', namespace: ns });
    await core.patchNamespacedConfigMap(
      { name: 'a', namespace: ns, body: [{ op: 'replace', path: '/data/value', value: 'edited by hand' }] },
      undefined,
    );
    clock.set('2026-12-21T09:00:00Z');
    const frozen = await run(delivery, deps);
    expect(frozen).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed', revision: `main@${v2}` });
    expect(frozen.message).toBe(
      `re-applied ${v1.revision} (drift corrected); revision main@${v2} is held: waiting for gate '${gate}' (closed; no opening scheduled: open it with sluice gate open)`,
    );
    expect(await valueOf('a', ns)).toBe('v1'); // drift corrected to the last applied revision
    expect(await valueOf('b', ns)).toBe('v1'); // re-created
    expect(await valueOf('c', ns)).toBeUndefined(); // the new revision is held
    expect(await getStatus(deps.db, delivery)).toMatchObject({
      reason: 'GateClosed',
      lastAppliedRevision: v1.revision,
      pendingRevision: `main@${v2}`,
      blockedBy: [{ name: gate, blocks: 'revisions' }],
    });

    clock.set('2027-01-04T08:00:00Z');
    const opened = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', reason: 'freeze over', requestedBy: 'cab', source: 'cli' }),
      gateDeps,
    );
    expect(opened.reconciling).toEqual([delivery]);
    expect(gateDeps.reconciled).toMatchObject([{ outcome: 'Succeeded', revision: `main@${v2}` }]);
    expect(await valueOf('a', ns)).toBe('v2');
    expect(await valueOf('c', ns)).toBe('v2');
    expect((await getStatus(deps.db, delivery))?.pendingRevision).toBeUndefined();
  });

  it('with nothing applied yet, a freeze holds the first revision entirely', async () => {
    const { deps, gate, delivery, ns, push } = await setup(
      '2026-12-18T17:00:00Z',
      { default: 'closed' },
      'revisions',
    );
    const digest = await push('main', { 'a.yaml': configMap('a', ns, 'v1') });
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', revision: `main@${digest}` });
    expect(held.message).toContain(`waiting for gate '${gate}'`);
    expect(await valueOf('a', ns)).toBeUndefined();
  });
});

describe('a gate that is not registered', () => {
  it('fails the run, naming the gate, and applies nothing', async () => {
    const deps = engineDeps();
    const delivery = uniqueName('orphan-ref');
    const ns = uniqueName('orphan-ref');
    const repository = uniqueName('gates/orphan');
    await createNamespace(bed.kubeConfig(), ns);
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap('app', ns, 'v1') });
    await registerDelivery(deps, bed, { name: delivery, repository, gates: [{ name: 'never-registered' }] });
    const result = await run(delivery, deps);
    expect(result).toMatchObject({ outcome: 'Failed' });
    expect(result.message).toBe(
      `delivery '${delivery}' references gate 'never-registered', which is not registered; nothing was applied (register the gate, or remove the reference)`,
    );
    expect(await valueOf('app', ns)).toBeUndefined();
  });
});
