// A dated freeze (and a calendar event) with the rest of the gate model, on the real components
// (DynamoDB Local, kube-apiserver, the registry, the STS stand-in that checks SigV4):
// - a break-glass override lets its pinned revision through a freeze, as through any closure
//   (alarms included); without it the freeze holds;
// - the start of a freeze is a close: an approval given before it does not open the gate after it;
// - a delivery held by a freeze catches up when it ends: the held run arranges the gate's
//   `gateOpened` one-time schedule for the freeze's end, as the gate function does for a window's.
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { evaluateGates, verdictFor } from '../../../functions/core/gates/evaluate.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { deliveriesForEvent } from '../../../functions/core/reconcile/triggers.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { signedOverride } from '../../support/break-glass.ts';
import { run } from '../../support/deliveries.ts';
import { gatedDelivery, inProcessGateDeps } from '../../support/gates.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ALICE = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/alice';
const BOB = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/bob';

/** `YYYY-MM-DD` (UTC) `days` from `at`. */
const dateOf = (at: number, days: number) => new Date(at + days * DAY).toISOString().slice(0, 10);

/** A delivery of one ConfigMap behind one fresh gate (`blocks: all`), with a hand-moved clock. */
async function frozenDelivery(start: string, gateSpec: Record<string, unknown>) {
  const timers: { gate: string; at: string }[] = [];
  const gateTimer = {
    reopenAt: async (gate: string, at: Date) => void timers.push({ gate, at: at.toISOString() }),
  };
  const gated = await gatedDelivery(bed, {
    start,
    gate: gateSpec,
    blocks: 'all',
    delivery: { tag: 'release' },
    names: { gate: 'frozen', delivery: 'frozen', repository: 'frozen/app' },
    deps: { gateTimer },
  });
  return { ...gated, timers, push: gated.pushValue, valueIn: gated.applied };
}

describe('a break-glass override and a dated freeze', () => {
  it('the override lets its pinned revision through the freeze; without it (another revision, or once it ends) the freeze holds', async () => {
    // Proofs are signed now, so the freeze covers the real now: from yesterday to the day after tomorrow (UTC).
    const now = Date.now();
    const { clock, deps, gate, delivery, push, valueIn } = await frozenDelivery(new Date(now).toISOString(), {
      default: 'open',
      freezes: [{ from: dateOf(now, -1), to: dateOf(now, 2), timeZone: 'UTC', reason: 'year end' }],
    });
    const hotfix = await push('1.3.1');
    const held = await run(delivery, deps);
    // A planned hold: the blocked-too-long alarm does not count it (UnplannedBlockedSeconds 0).
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed', revision: hotfix, planned: true });
    expect(held.message).toContain(`waiting for gate '${gate}' (closed by freeze "year end"`);
    expect(await valueIn()).toBeUndefined();

    const gateDeps = inProcessGateDeps(deps);
    const handler = gateHandler(() => gateDeps);
    const made = await signedOverride(handler, {
      gates: [gate],
      revision: hotfix,
      window: '1h',
      reason: 'INC-77 hotfix',
    });
    expect(made).toMatchObject({ outcome: 'accepted', reconciling: [delivery] });
    expect(gateDeps.reconciled.at(-1)).toMatchObject({ outcome: 'Succeeded', revision: hotfix });
    expect(await valueIn()).toBe('1.3.1');
    // The gate itself is as the freeze makes it: closed.
    expect((await gateStatus(gate, gateDeps)).status).toMatchObject({
      state: 'closed',
      closedBy: { cause: 'freeze' },
    });

    // Another revision is held by the freeze, override or not.
    clock.advance(5 * 60_000);
    const next = await push('1.4.0');
    expect(await run(delivery, deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'GateClosed',
      revision: next,
    });
    expect(await valueIn()).toBe('1.3.1');

    // Once the override ends, the freeze holds the hotfix too.
    const verdict = async () =>
      verdictFor(
        await evaluateGates(delivery, [{ name: gate, blocks: 'all' }], deps.db, clock.now(), deps),
        hotfix,
      );
    expect((await verdict()).blockAll).toEqual([]);
    clock.advance(HOUR);
    expect((await verdict()).blockAll).toEqual([
      expect.objectContaining({ name: gate, closedBy: expect.stringContaining('year end') }),
    ]);
  });
});

describe('the start of a freeze is a close', () => {
  it('an open request made before a freeze does not open the gate after it, though its window outlasts the freeze', async () => {
    // 2026-12-24 10:00 to 12:00 UTC; an approval at 09:00 for 24h.
    const { clock, deps, gate, delivery, push, valueIn } = await frozenDelivery('2026-12-24T09:00:00Z', {
      default: 'closed',
      window: '24h',
      freezes: [
        { from: '2026-12-24T10:00', to: '2026-12-24T12:00', timeZone: 'UTC', reason: 'deploy freeze' },
      ],
    });
    const gateDeps = inProcessGateDeps(deps);
    await push('v1');
    const opened = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', requestedBy: 'alice' }),
      gateDeps,
    );
    expect(opened).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    // Open until the freeze starts, not for the whole window.
    expect(opened.status.until).toBe('2026-12-24T10:00:00.000Z');
    expect(await valueIn()).toBe('v1');

    clock.set('2026-12-24T11:00:00Z');
    await push('v2');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });

    // After the freeze the gate is at its default (closed): the approval was given before the freeze.
    clock.set('2026-12-24T12:30:00Z');
    const { status } = await gateStatus(gate, gateDeps);
    expect(status).toMatchObject({ state: 'closed', byRequest: false });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(await valueIn()).toBe('v1');

    // An approval after the freeze opens it.
    const again = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', requestedBy: 'alice' }),
      gateDeps,
    );
    expect(again).toMatchObject({ outcome: 'accepted', status: { state: 'open' }, reconciling: [delivery] });
    expect(await valueIn()).toBe('v2');
  });

  it('a two-person approval: the approval given before the freeze does not count after it, the second approver waits for another', async () => {
    const { clock, deps, gate } = await frozenDelivery('2026-12-24T09:00:00Z', {
      default: 'closed',
      window: '8h',
      approvers: 2,
      freezes: [{ from: '2026-12-24T10:00', to: '2026-12-24T12:00', timeZone: 'UTC' }],
    });
    const gateDeps = inProcessGateDeps(deps);
    const signed = (principal: string) =>
      handleGateEvent(parseGateEvent({ gate, action: 'open' }, { signed: true }), gateDeps, {
        principal,
        verified: true,
      });
    expect(await signed(ALICE)).toMatchObject({ outcome: 'pending' });
    clock.set('2026-12-24T12:30:00Z');
    expect((await gateStatus(gate, gateDeps)).pendingApprovals).toBeUndefined();
    const bob = await signed(BOB);
    expect(bob).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(bob.pendingApprovals?.approvals.map((approval) => approval.principal)).toEqual([BOB]);
    clock.advance(60_000);
    expect(await signed(ALICE)).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
  });
});

describe('catching up when a freeze or a calendar event ends', () => {
  it("a held run arranges the gate's reopening at the freeze's end once; gateOpened then reconciles the held delivery", async () => {
    const { clock, deps, timers, gate, delivery, push, valueIn } = await frozenDelivery(
      '2026-12-24T09:00:00Z',
      {
        default: 'open',
        freezes: [{ from: '2026-12-24', to: '2026-12-27', timeZone: 'Europe/Berlin' }],
      },
    );
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(timers).toEqual([{ gate, at: '2026-12-26T23:00:00.000Z' }]);
    // The next held run finds it arranged: no second schedule.
    clock.advance(5 * 60_000);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(timers).toHaveLength(1);

    // The schedule fires at the freeze's end with {"gateOpened": gate}: the deliveries using it reconcile.
    clock.set('2026-12-26T23:00:00Z');
    const concerned = await deliveriesForEvent({ gateOpened: gate }, deps.db);
    expect(concerned).toEqual([delivery]);
    for (const name of concerned) expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await valueIn()).toBe('v1');
  });

  it('a calendar event: the held run arranges the reopening at the end of the event', async () => {
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//sluice//test//EN',
      'BEGIN:VEVENT',
      'UID:maintenance@sluice.test',
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20260601T080000Z',
      'DTEND:20260601T100000Z',
      'SUMMARY:database maintenance',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    const { deps, timers, gate, delivery, push } = await frozenDelivery('2026-06-01T09:00:00Z', {
      default: 'open',
      calendars: [{ name: 'maintenance', ics }],
    });
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(timers).toEqual([{ gate, at: '2026-06-01T10:00:00.000Z' }]);
  });
});
