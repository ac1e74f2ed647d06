// Red team 5: blocked-time accounting. A gate closed by its own schedule is a planned hold and
// does not count toward UnplannedBlockedSeconds; can a close schedule silence the alarm forever,
// and can a person's close pass for a scheduled one?
import { describe, expect, it } from 'vitest';
import { handleGateEvent } from '../../functions/core/gates/requests.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/outcomes.ts';
import { run } from '../support/deliveries.ts';
import { gatedDelivery } from '../support/gates.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
const names = { gate: 'plan', delivery: 'plan', repository: 'plan' };
const EVENING_CLOSE = { cron: '0 18 * * ? *', timeZone: 'UTC', action: 'close' };
const MORNING_OPEN = { cron: '0 9 * * ? *', timeZone: 'UTC', action: 'open' };

async function heldRun(gate: Record<string, unknown>) {
  const g = await gatedDelivery(bed, { start: '2026-11-27T18:30:00Z', gate, names });
  await g.pushValue('v1');
  const first = (await run(g.delivery, g.deps)) as ReconcileResult;
  g.clock.advance(3 * 24 * 3_600_000);
  const later = (await run(g.delivery, g.deps)) as ReconcileResult;
  return { first, later };
}

describe('planned holds and the unplanned blocked clock', () => {
  it('a close schedule with nothing to reopen the gate does not silence the alarm forever', async () => {
    // Closed at 18:00 by its schedule, and nothing (no open schedule, no window) ever opens it.
    const { first, later } = await heldRun({ default: 'closed', schedules: [EVENING_CLOSE] });
    expect(first.outcome).toBe('Blocked');
    expect(later.outcome).toBe('Blocked');
    expect(later.planned).toBeUndefined();
    expect(later.unplannedBlockedSince).toBe(first.unplannedBlockedSince);
    expect(Date.parse(later.unplannedBlockedSince!)).toBeLessThanOrEqual(Date.parse('2026-11-27T18:30:00Z'));
  });

  it('held: a close schedule that a morning open schedule ends is planned', async () => {
    const g = await gatedDelivery(bed, {
      start: '2026-11-27T18:30:00Z',
      gate: { default: 'closed', schedules: [EVENING_CLOSE, MORNING_OPEN] },
      names,
    });
    await g.pushValue('v1');
    const result = (await run(g.delivery, g.deps)) as ReconcileResult;
    expect(result).toMatchObject({ outcome: 'Blocked', planned: true });
    expect(result.unplannedBlockedSince).toBeUndefined();
  });

  it("held: a person's close after the schedule's close is not planned", async () => {
    const g = await gatedDelivery(bed, {
      start: '2026-11-27T18:30:00Z',
      gate: { default: 'closed', schedules: [EVENING_CLOSE, MORNING_OPEN] },
      names,
    });
    await g.pushValue('v1');
    // 18:31, after the schedule closed it at 18:00: a person closes it too, until further notice.
    g.clock.advance(60_000);
    await handleGateEvent(
      { gate: g.gate, action: 'close', source: 'cli', requestedBy: 'mallory', reason: 'incident' },
      { db: g.deps.db, clock: g.clock },
    );
    const result = (await run(g.delivery, g.deps)) as ReconcileResult;
    expect(result.outcome).toBe('Blocked');
    expect(result.planned).toBeUndefined();
    expect(result.unplannedBlockedSince).toBeDefined();
  });

  it('held: a claim naming a schedule as its author, at a time it did not fire, is refused', async () => {
    const g = await gatedDelivery(bed, {
      start: '2026-11-27T18:30:00Z',
      gate: { default: 'closed', schedules: [EVENING_CLOSE, MORNING_OPEN] },
      names,
    });
    await expect(
      handleGateEvent(
        {
          gate: g.gate,
          action: 'close',
          source: 'schedule',
          requestedBy: `schedule/${g.gate}/0`,
          requestedAt: '2026-11-27T18:29:00.000Z',
          reason: 'looks planned',
        },
        { db: g.deps.db, clock: g.clock },
      ),
    ).rejects.toThrow(/is not a time any of gate/);
  });
});
