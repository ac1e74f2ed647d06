// The gate function's metrics: GateOpen (1 or 0) and PendingApprovals per gate after each request;
// GateState, the effective state, at each status read.
import { describe, expect, it } from 'vitest';
import type { GateRequestResult } from '../../../functions/core/gates/requests.ts';
import type { OverrideResult } from '../../../functions/core/break-glass/override-request.ts';
import { recordGateMetrics, recordOverrideMetrics } from '../../../functions/gate/metrics.ts';

function recorder() {
  const calls: unknown[][] = [];
  const metrics = {
    addDimension: (...args: unknown[]) => calls.push(['dimension', ...args]),
    addMetric: (...args: unknown[]) => calls.push(['metric', ...args]),
    publishStoredMetrics: () => calls.push(['publish']),
  };
  return { calls, metrics: metrics as unknown as Parameters<typeof recordGateMetrics>[0] };
}

const result = (fields: Partial<GateRequestResult> & Pick<GateRequestResult, 'action'>): GateRequestResult =>
  ({
    gate: 'sre-approval',
    outcome: 'accepted',
    status: { name: 'sre-approval', state: 'closed' },
    reconciling: [],
    message: 'x',
    ...fields,
  }) as GateRequestResult;

describe('gate metrics', () => {
  it('an open request: GateOpen 1, PendingApprovals 0, with the gate as dimension, published at once', () => {
    const { calls, metrics } = recorder();
    recordGateMetrics(
      metrics,
      result({
        action: 'open',
        status: { name: 'sre-approval', state: 'open' } as GateRequestResult['status'],
      }),
    );
    expect(calls).toEqual([
      ['dimension', 'gate', 'sre-approval'],
      ['metric', 'GateOpen', 'Count', 1],
      ['metric', 'PendingApprovals', 'Count', 0],
      ['publish'],
    ]);
  });

  it('a first of two approvals: the gate still closed, one approval pending', () => {
    const { calls, metrics } = recorder();
    const pendingApprovals = { approvals: [{}], expiresAt: '2026-06-02T09:00:00Z' };
    recordGateMetrics(
      metrics,
      result({
        action: 'open',
        outcome: 'pending',
        pendingApprovals: pendingApprovals as unknown as GateRequestResult['pendingApprovals'],
      }),
    );
    expect(calls).toContainEqual(['metric', 'GateOpen', 'Count', 0]);
    expect(calls).toContainEqual(['metric', 'PendingApprovals', 'Count', 1]);
  });

  it("a status read (the dashboard's schedule) records the effective state: closed by an alarm though its requests say open", () => {
    const { calls, metrics } = recorder();
    recordGateMetrics(
      metrics,
      result({
        action: 'status',
        outcome: 'status',
        status: { name: 'sre-approval', state: 'open' } as GateRequestResult['status'],
        effective: { state: 'closed', cause: 'alarm', why: "alarm 'shop-5xx' in ALARM since …" },
      }),
    );
    expect(calls).toEqual([
      ['dimension', 'gate', 'sre-approval'],
      ['metric', 'GateState', 'Count', 0],
      ['publish'],
    ]);
    const open = recorder();
    recordGateMetrics(
      open.metrics,
      result({
        action: 'status',
        outcome: 'status',
        effective: { state: 'open', cause: 'default', why: 'default' },
      }),
    );
    expect(open.calls).toContainEqual(['metric', 'GateState', 'Count', 1]);
    // Neither counts as a request.
    expect([...calls, ...open.calls].some((call) => call[1] === 'GateOpen')).toBe(false);
  });

  it('a break-glass override: BreakGlassOverride 1 with no gate dimension (one alarm covers every gate), published at once', () => {
    const { calls, metrics } = recorder();
    recordOverrideMetrics(metrics, {
      action: 'override',
      outcome: 'accepted',
      overrides: [],
      reconciling: [],
      message: 'x',
    } as OverrideResult);
    expect(calls).toEqual([['metric', 'BreakGlassOverride', 'Count', 1], ['publish']]);
  });
});
