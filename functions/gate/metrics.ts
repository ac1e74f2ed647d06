import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { OverrideResult } from '../core/gates/override-request.ts';
import type { GateRequestResult } from '../core/gates/requests.ts';

/** The gate function's CloudWatch metrics (Powertools EMF); the construct's dashboard uses the same names. */
export const GATE_METRICS = {
  namespace: 'Sluice',
  /** Powertools adds it to every metric as the `service` dimension. */
  service: 'sluice-gate',
  dimension: 'gate',
  /**
   * 1 when the gate is open after a request (or schedule firing), 0 when closed; its sample count
   * is the number of requests. A window's end makes no data point: `sluice gates` is the truth.
   */
  open: 'GateOpen',
  /** Approvals gathered towards `approvers` (0 once the gate opens or closes). */
  pendingApprovals: 'PendingApprovals',
  /**
   * 1 for each break-glass override made, with the service as its only dimension, so that one
   * alarm (the construct's breakGlassAlarm) fires on an override of any gate.
   */
  override: 'BreakGlassOverride',
} as const;

/**
 * After an open or close request (not a status read): GateOpen (1 or 0) and PendingApprovals, with
 * the gate as dimension, published at once. Two custom metrics per gate ($0.60 a gate-month).
 */
export function recordGateMetrics(
  metrics: Pick<Metrics, 'addDimension' | 'addMetric' | 'publishStoredMetrics'>,
  result: GateRequestResult,
): void {
  if (result.action === 'status') return;
  metrics.addDimension(GATE_METRICS.dimension, result.gate);
  metrics.addMetric(GATE_METRICS.open, 'Count', result.status.state === 'open' ? 1 : 0);
  metrics.addMetric(GATE_METRICS.pendingApprovals, 'Count', result.pendingApprovals?.approvals.length ?? 0);
  metrics.publishStoredMetrics();
}

/** After a break-glass override is made: BreakGlassOverride 1, with no gate dimension, published at once. */
export function recordOverrideMetrics(
  metrics: Pick<Metrics, 'addMetric' | 'publishStoredMetrics'>,
  result: OverrideResult,
): void {
  if (result.outcome !== 'accepted') return;
  metrics.addMetric(GATE_METRICS.override, 'Count', 1);
  metrics.publishStoredMetrics();
}
