// The reconcile function's metrics: one per outcome with the delivery as dimension, BlockedSeconds when blocked.
import { describe, expect, it } from 'vitest';
import type { ReconcileResult } from '../../../functions/core/reconcile/reconcile.ts';
import { RECONCILE_METRICS, recordReconcileMetrics } from '../../../functions/reconcile/metrics.ts';

function recorder() {
  const calls: unknown[][] = [];
  const metrics = {
    addDimension: (...args: unknown[]) => calls.push(['dimension', ...args]),
    addMetric: (...args: unknown[]) => calls.push(['metric', ...args]),
    publishStoredMetrics: () => calls.push(['publish']),
  };
  return { calls, metrics: metrics as unknown as Parameters<typeof recordReconcileMetrics>[0] };
}

const result = (outcome: ReconcileResult['outcome']): ReconcileResult => ({
  delivery: 'oddy-test',
  outcome,
  reason: 'ReconciliationSucceeded',
  message: 'x',
});
const now = new Date('2026-03-27T12:00:00Z');

describe('reconcile metrics', () => {
  it.each([
    ['Succeeded', 'ReconcileSucceeded'],
    ['Failed', 'ReconcileFailed'],
  ] as const)(
    '%s: %s = 1 and ReconcileCompleted = 1 with dimension delivery, published at once',
    (outcome, metric) => {
      const { calls, metrics } = recorder();
      recordReconcileMetrics(metrics, result(outcome), now);
      expect(calls).toEqual([
        ['dimension', 'delivery', 'oddy-test'],
        ['metric', metric, 'Count', 1],
        ['metric', 'ReconcileCompleted', 'Count', 1],
        ['publish'],
      ]);
    },
  );

  it('Blocked: ReconcileBlocked and BlockedSeconds since the delivery was first held', () => {
    const { calls, metrics } = recorder();
    recordReconcileMetrics(metrics, { ...result('Blocked'), blockedSince: '2026-03-27T09:00:00Z' }, now);
    expect(calls).toEqual([
      ['dimension', 'delivery', 'oddy-test'],
      ['metric', 'ReconcileBlocked', 'Count', 1],
      ['metric', 'ReconcileCompleted', 'Count', 1],
      ['metric', 'BlockedSeconds', 'Seconds', 3 * 3600],
      ['metric', 'UnplannedBlockedSeconds', 'Seconds', 3 * 3600],
      ['publish'],
    ]);
  });

  it('Blocked by a planned freeze or calendar only: UnplannedBlockedSeconds is 0, BlockedSeconds as long as it is', () => {
    const { calls, metrics } = recorder();
    recordReconcileMetrics(
      metrics,
      { ...result('Blocked'), blockedSince: '2026-03-20T12:00:00Z', planned: true },
      now,
    );
    expect(calls).toContainEqual(['metric', 'BlockedSeconds', 'Seconds', 7 * 86400]);
    expect(calls).toContainEqual(['metric', 'UnplannedBlockedSeconds', 'Seconds', 0]);
  });

  it('Blocked by something unplanned after a planned hold: UnplannedBlockedSeconds counts from when that hold began', () => {
    const { calls, metrics } = recorder();
    recordReconcileMetrics(
      metrics,
      {
        ...result('Blocked'),
        blockedSince: '2026-03-20T12:00:00Z',
        unplannedBlockedSince: '2026-03-27T11:00:00Z',
      },
      now,
    );
    expect(calls).toContainEqual(['metric', 'BlockedSeconds', 'Seconds', 7 * 86400]);
    expect(calls).toContainEqual(['metric', 'UnplannedBlockedSeconds', 'Seconds', 3600]);
  });

  it('fleet: the same metrics without the delivery dimension (one metric for all deliveries)', () => {
    const { calls, metrics } = recorder();
    recordReconcileMetrics(metrics, result('Failed'), now, 'fleet');
    expect(calls).toEqual([
      ['metric', 'ReconcileFailed', 'Count', 1],
      ['metric', 'ReconcileCompleted', 'Count', 1],
      ['publish'],
    ]);
  });

  it('a run that applied: KeptObjects, the CRDs and Namespaces it kept (0 too, so the alarm clears)', () => {
    const changes = { created: 0, configured: 0, unchanged: 1, deleted: 1 };
    const kept = [{ id: '_a__Namespace', container: 'Namespace/a', objects: ['ConfigMap/a/x'] }];
    const applied = recorder();
    recordReconcileMetrics(applied.metrics, { ...result('Succeeded'), changes, kept }, now);
    expect(applied.calls).toContainEqual(['metric', 'KeptObjects', 'Count', 1]);
    const clean = recorder();
    recordReconcileMetrics(clean.metrics, { ...result('Succeeded'), changes }, now);
    expect(clean.calls).toContainEqual(['metric', 'KeptObjects', 'Count', 0]);
  });

  it('Skipped runs (lease held, suspended) are not counted, not even as completed', () => {
    const { calls, metrics } = recorder();
    recordReconcileMetrics(metrics, result('Skipped'), now);
    expect(calls).toEqual([]);
  });

  it('names what the CDK alarms watch', () => {
    expect(RECONCILE_METRICS).toMatchObject({
      namespace: 'Sluice',
      service: 'sluice-reconcile',
      failed: 'ReconcileFailed',
    });
  });
});
