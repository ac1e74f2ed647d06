// The blocked-too-long alarm's clock (UnplannedBlockedSeconds), on the real components (DynamoDB
// Local, kube-apiserver, the registry) with a hand-moved clock:
// - it starts when the unplanned hold began (the first run that found the delivery held by
//   something unplanned), not when an earlier planned hold (a freeze) began;
// - a gate closed by its own `schedules` (No-Deploy-Friday) is a planned hold and counts 0; a
//   person's close of the same gate counts, from the run that first found it.
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../../functions/core/gates/requests.ts';
import type { ReconcileResult } from '../../../functions/core/reconcile/reconcile.ts';
import { recordReconcileMetrics } from '../../../functions/reconcile/metrics.ts';
import { run } from '../../support/deliveries.ts';
import { gatedDelivery, inProcessGateDeps } from '../../support/gates.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const HOUR = 3_600_000;

/** The seconds each metric of `result` reports at `now`, by name. */
function metricsOf(result: ReconcileResult, now: Date): Record<string, number> {
  const values: Record<string, number> = {};
  recordReconcileMetrics(
    {
      addDimension: () => undefined,
      addMetric: (name: string, _unit: string, value: number) => void (values[name] = value),
      publishStoredMetrics: () => undefined,
    } as unknown as Parameters<typeof recordReconcileMetrics>[0],
    result,
    now,
  );
  return values;
}

describe('UnplannedBlockedSeconds counts from the start of the unplanned hold', () => {
  it('a freeze that ends while the gate stays closed: the clock starts after the freeze, not at its start', async () => {
    const { clock, deps, delivery, pushValue } = await gatedDelivery(bed, {
      start: '2026-12-24T10:30:00Z',
      gate: {
        default: 'closed',
        freezes: [{ from: '2026-12-24T10:00', to: '2026-12-26T10:00', timeZone: 'UTC', reason: 'holidays' }],
      },
      delivery: { tag: 'release' },
      names: { gate: 'clockfreeze', delivery: 'clockfreeze', repository: 'clockfreeze/app' },
    });
    await pushValue('1.0.0');
    const frozen = await run(delivery, deps);
    expect(frozen).toMatchObject({ outcome: 'Blocked', planned: true });
    expect(metricsOf(frozen, clock.now())).toMatchObject({ BlockedSeconds: 0, UnplannedBlockedSeconds: 0 });

    // The freeze ended at 10:00 on the 26th; at noon the gate (closed by default) still holds it.
    clock.set('2026-12-26T12:00:00Z');
    const held = await run(delivery, deps);
    expect(metricsOf(held, clock.now())).toMatchObject({
      BlockedSeconds: 49.5 * 3600,
      UnplannedBlockedSeconds: 0,
    });
    expect(held).toMatchObject({
      outcome: 'Blocked',
      blockedSince: '2026-12-24T10:30:00.000Z',
      unplannedBlockedSince: '2026-12-26T12:00:00.000Z',
    });
    expect(held.planned).toBeUndefined();
    clock.advance(HOUR);
    const later = await run(delivery, deps);
    expect(later).toMatchObject({ unplannedBlockedSince: '2026-12-26T12:00:00.000Z' });
    expect(metricsOf(later, clock.now())).toMatchObject({
      BlockedSeconds: 50.5 * 3600,
      UnplannedBlockedSeconds: 3600,
    });
  });
});

describe("a gate closed by its own schedule (No-Deploy-Friday) is a planned hold; a person's close is not", () => {
  it("the cron close counts 0; the person's close counts from the first run that found it", async () => {
    // 2026-12-04 is a Friday.
    const { clock, deps, gate, delivery, pushValue } = await gatedDelivery(bed, {
      start: '2026-12-04T09:00:00Z',
      gate: {
        default: 'open',
        schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'UTC', action: 'close', window: '24h' }],
      },
      delivery: { tag: 'release' },
      names: { gate: 'nodeployfri', delivery: 'nodeployfri', repository: 'nodeployfri/app' },
    });
    await pushValue('1.0.0');
    const friday = await run(delivery, deps);
    expect(friday).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed', planned: true });
    clock.advance(2 * HOUR);
    expect(metricsOf(await run(delivery, deps), clock.now())).toMatchObject({
      BlockedSeconds: 2 * 3600,
      UnplannedBlockedSeconds: 0,
    });

    // On Saturday a person closes the gate (an incident): that hold is unplanned.
    clock.set('2026-12-05T08:00:00Z');
    const gateDeps = inProcessGateDeps(deps);
    await handleGateEvent(
      parseGateEvent({ gate, action: 'close', requestedBy: 'alice', reason: 'INC-9' }),
      gateDeps,
    );
    clock.set('2026-12-05T09:00:00Z');
    const closed = await run(delivery, deps);
    expect(closed).toMatchObject({ outcome: 'Blocked', unplannedBlockedSince: '2026-12-05T09:00:00.000Z' });
    expect(closed.planned).toBeUndefined();
    clock.advance(HOUR);
    expect(metricsOf(await run(delivery, deps), clock.now())).toMatchObject({
      UnplannedBlockedSeconds: 3600,
    });
  });
});
