import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { OverrideResult } from '../core/break-glass/override-request.ts';
import type { GateRequestResult } from '../core/gates/requests.ts';

/** How often the construct's dashboard has the gate function read each gate's state (GateState). */
export const GATE_STATE_RATE_MINUTES = 5;

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
  /**
   * 1 when the gate is open as a delivery meets it (alarms, freezes, calendar events and Change
   * Calendars included), 0 when closed: recorded at each status read, which the construct's
   * dashboard schedules every 5 minutes per gate it shows (GATE_STATE_RATE_MINUTES).
   */
  state: 'GateState',
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
  if (result.action === 'status') {
    // A status read (the dashboard's schedule): the effective state, one custom metric per gate.
    if (!result.effective) return;
    metrics.addDimension(GATE_METRICS.dimension, result.gate);
    metrics.addMetric(GATE_METRICS.state, 'Count', result.effective.state === 'open' ? 1 : 0);
    metrics.publishStoredMetrics();
    return;
  }
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
