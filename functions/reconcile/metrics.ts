import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { ReconcileResult } from '../core/reconcile/reconcile.ts';

/** The reconcile function's CloudWatch metrics (Powertools EMF); the CDK alarms use the same names. */
export const RECONCILE_METRICS = {
  namespace: 'Sluice',
  /** Powertools adds it to every metric as the `service` dimension. */
  service: 'sluice-reconcile',
  dimension: 'delivery',
  succeeded: 'ReconcileSucceeded',
  failed: 'ReconcileFailed',
  blocked: 'ReconcileBlocked',
  blockedSeconds: 'BlockedSeconds',
  /**
   * As BlockedSeconds, but 0 while every gate holding the delivery is closed by a planned period
   * (a freeze, a calendar event, a Change Calendar) or its own schedule's close, and otherwise
   * counted from when the unplanned hold began: the blocked-too-long alarm watches it.
   */
  unplannedBlockedSeconds: 'UnplannedBlockedSeconds',
  /** CRDs and Namespaces a run that applied left in place, as they hold objects it does not delete. */
  kept: 'KeptObjects',
  /** Every run that got as far as an outcome (succeeded, failed or blocked): the staleness alarm's heartbeat. */
  completed: 'ReconcileCompleted',
} as const;

/**
 * `delivery`: every metric per delivery (a CloudWatch custom metric, $0.30 a month, per delivery
 * and name); `fleet`: one of each for all deliveries.
 */
export type MetricsScope = 'delivery' | 'fleet';

const OUTCOME_METRIC: Partial<Record<ReconcileResult['outcome'], string>> = {
  Succeeded: RECONCILE_METRICS.succeeded,
  Failed: RECONCILE_METRICS.failed,
  Blocked: RECONCILE_METRICS.blocked,
};

/**
 * One metric per outcome with the delivery as dimension (unless `fleet`), ReconcileCompleted for each of them
 * (the staleness alarm watches it), for a run that applied how many CRDs and Namespaces it kept
 * (KeptObjects), and for a blocked delivery how long it has been blocked. Published at once, so each delivery of an event gets its own dimension.
 */
export function recordReconcileMetrics(
  metrics: Pick<Metrics, 'addDimension' | 'addMetric' | 'publishStoredMetrics'>,
  result: ReconcileResult,
  now: Date,
  /** `fleet`: without the delivery dimension, one metric each for all deliveries (monitoring: 'fleet'). */
  scope: MetricsScope = 'delivery',
): void {
  const metric = OUTCOME_METRIC[result.outcome];
  if (!metric) return; // Skipped: another run or suspend; nothing happened worth counting
  if (scope === 'delivery') metrics.addDimension(RECONCILE_METRICS.dimension, result.delivery);
  metrics.addMetric(metric, 'Count', 1);
  metrics.addMetric(RECONCILE_METRICS.completed, 'Count', 1);
  // Every run that applied says how many it kept, 0 too: the alarm clears once none is left.
  if (result.changes) metrics.addMetric(RECONCILE_METRICS.kept, 'Count', result.kept?.length ?? 0);
  const since = result.blockedSince ? Date.parse(result.blockedSince) : NaN;
  if (result.outcome === 'Blocked' && !Number.isNaN(since)) {
    const seconds = Math.max(0, (now.getTime() - since) / 1000);
    metrics.addMetric(RECONCILE_METRICS.blockedSeconds, 'Seconds', seconds);
    const unplanned = Date.parse(result.unplannedBlockedSince ?? result.blockedSince!);
    metrics.addMetric(
      RECONCILE_METRICS.unplannedBlockedSeconds,
      'Seconds',
      result.planned || Number.isNaN(unplanned) ? 0 : Math.max(0, (now.getTime() - unplanned) / 1000),
    );
  }
  metrics.publishStoredMetrics();
}
