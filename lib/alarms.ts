import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { formatDuration, type Delivery } from '../functions/core/config/index.ts';
import { RECONCILE_METRICS } from '../functions/reconcile/metrics.ts';
import { notify } from './alarm-actions.ts';

export interface DeliveryAlarmsProps {
  readonly deliveries: readonly Delivery[];
  readonly blockedAlarmThreshold: Duration;
  /** @default - no actions */
  readonly alarmTopic?: sns.ITopic;
}

/** A reconcile metric of one delivery, as the reconcile function's Powertools Metrics emit it. */
export function deliveryMetric(
  metricName: string,
  delivery: Delivery,
  options: cloudwatch.MetricOptions = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: RECONCILE_METRICS.namespace,
    metricName,
    dimensionsMap: { service: RECONCILE_METRICS.service, [RECONCILE_METRICS.dimension]: delivery.name },
    // A period of the interval has a data point whenever the delivery reconciles on schedule.
    period: Duration.millis(Math.min(Math.max(Math.ceil(delivery.intervalMs / 60_000), 1), 1440) * 60_000),
    ...options,
  });
}

/** How many intervals without a completed reconcile make a delivery stale. */
export const STALE_INTERVALS = 3;
/**
 * The fewest intervals a staleness window may hold when CloudWatch cannot look back three: at
 * least one whole run must have been missed, whatever the schedule's spread.
 */
export const MIN_STALE_INTERVALS = 2;
/** CloudWatch evaluates an alarm over at most 7 days (period × evaluation periods)... */
export const MAX_ALARM_RANGE_MS = 7 * 86_400_000;
/** ...and over at most a day when its period is shorter than an hour (PutMetricAlarm). */
const SHORT_PERIOD_MS = 3_600_000;
const SHORT_PERIOD_RANGE_MS = 86_400_000;

/** A staleness alarm's period, in whole minutes as CloudWatch wants them, and how many of them. */
export interface StalenessWindow {
  readonly periodMinutes: number;
  readonly periods: number;
}

/**
 * The staleness alarm's period and how many of them: three intervals, or as many as CloudWatch's
 * 7 days hold; undefined when those hold fewer than two (an interval longer than 3d12h), which no
 * alarm can watch without firing between runs.
 */
export function stalenessWindow(intervalMs: number): StalenessWindow | undefined {
  const windowMs = Math.min(STALE_INTERVALS * intervalMs, MAX_ALARM_RANGE_MS);
  if (windowMs < MIN_STALE_INTERVALS * intervalMs) return undefined;
  const periodMinutes = Math.max(1, Math.floor(windowMs / STALE_INTERVALS / 60_000));
  const periods = Math.max(1, Math.floor(windowMs / (periodMinutes * 60_000)));
  const rangeMs = periodMinutes * periods * 60_000;
  const limit = periodMinutes * 60_000 < SHORT_PERIOD_MS ? SHORT_PERIOD_RANGE_MS : MAX_ALARM_RANGE_MS;
  return rangeMs <= limit ? { periodMinutes, periods } : undefined;
}

/** The longest interval a staleness alarm can watch (3d12h: two intervals in CloudWatch's 7 days). */
export const MAX_WATCHED_INTERVAL_MS = MAX_ALARM_RANGE_MS / MIN_STALE_INTERVALS;

/** Why CloudWatch cannot watch a delivery of this interval for staleness, or undefined when it can. */
export function stalenessProblem(intervalMs: number): string | undefined {
  if (stalenessWindow(intervalMs)) return undefined;
  return `${formatDuration(intervalMs)} is too long for the delivery's staleness alarm: it must watch at least ${MIN_STALE_INTERVALS} intervals (${formatDuration(MIN_STALE_INTERVALS * intervalMs)}) without a completed reconcile, and CloudWatch evaluates an alarm over at most 7d. Use an interval of at most ${formatDuration(MAX_WATCHED_INTERVAL_MS)}, or suspend the delivery`;
}

/**
 * Per delivery: an alarm when a reconcile fails; one when it has been held too long (gates, the
 * mass-deletion brake, dependencies); one when a run keeps a CRD or Namespace it leaves out
 * (KeptObjects); and, unless it is suspended, one when no reconcile has
 * completed in three intervals (missing data breaching), which a crash, a timeout, a lost schedule
 * or a disabled trigger all end in.
 */
export class DeliveryAlarms extends Construct {
  readonly failed = new Map<string, cloudwatch.Alarm>();
  readonly blocked = new Map<string, cloudwatch.Alarm>();
  /** A run kept a CRD or Namespace it left out (it holds objects the run does not delete). */
  readonly kept = new Map<string, cloudwatch.Alarm>();
  /** Not for suspended deliveries: they do not reconcile, by design. */
  readonly stale = new Map<string, cloudwatch.Alarm>();

  constructor(scope: Construct, id: string, props: DeliveryAlarmsProps) {
    super(scope, id);
    const threshold = props.blockedAlarmThreshold;
    for (const delivery of props.deliveries) {
      const failed = new cloudwatch.Alarm(this, `${delivery.name}-failed`, {
        alarmDescription: `sluice: a reconcile of delivery ${delivery.name} failed (see its status: sluice status ${delivery.name})`,
        metric: deliveryMetric(RECONCILE_METRICS.failed, delivery, { statistic: cloudwatch.Stats.SUM }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      const blocked = new cloudwatch.Alarm(this, `${delivery.name}-blocked`, {
        alarmDescription: `sluice: delivery ${delivery.name} has been held (closed gates, the mass-deletion brake or a dependency not ready) for more than ${formatDuration(threshold.toMilliseconds())}, not counting planned freezes, calendar events and Change Calendars`,
        // Planned holds (freezes, calendar events, Change Calendars) count 0: no page through a planned freeze.
        metric: deliveryMetric(RECONCILE_METRICS.unplannedBlockedSeconds, delivery, {
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: threshold.toSeconds({ integral: false }),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      const kept = new cloudwatch.Alarm(this, `${delivery.name}-kept`, {
        alarmDescription: `sluice: delivery ${delivery.name} keeps a CRD or Namespace its revision leaves out, as it holds objects the delivery does not delete (which: sluice status ${delivery.name})`,
        metric: deliveryMetric(RECONCILE_METRICS.kept, delivery, { statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      for (const alarm of [failed, blocked, kept]) notify(alarm, props.alarmTopic);
      this.failed.set(delivery.name, failed);
      this.blocked.set(delivery.name, blocked);
      this.kept.set(delivery.name, kept);
      if (!delivery.suspend) this.stale.set(delivery.name, this.staleAlarm(delivery, props.alarmTopic));
    }
  }

  private staleAlarm(delivery: Delivery, topic: sns.ITopic | undefined): cloudwatch.Alarm {
    const alarm = staleAlarm(this, `${delivery.name}-stale`, {
      intervalMs: delivery.intervalMs,
      dimensions: { [RECONCILE_METRICS.dimension]: delivery.name },
      description: (window) =>
        `sluice: no reconcile of delivery ${delivery.name} has completed in ${window} (its interval is ${formatDuration(delivery.intervalMs)}): the reconcile function crashed or timed out, or its schedule did not fire; see the function's errors alarm and the failure queue`,
    });
    notify(alarm, topic);
    return alarm;
  }
}

/**
 * An alarm when no reconcile has completed (ReconcileCompleted, summed) in three intervals,
 * missing data counting as none; `dimensions` besides the service's choose whose reconciles.
 */
export interface StaleAlarmOptions {
  /** The shortest interval at which reconciles are expected. */
  readonly intervalMs: number;
  /** Besides the service's: whose reconciles count. */
  readonly dimensions: Record<string, string>;
  /** The alarm's description, given the window it watches. */
  readonly description: (window: string) => string;
}

export function staleAlarm(
  scope: Construct,
  id: string,
  { intervalMs, dimensions, description }: StaleAlarmOptions,
): cloudwatch.Alarm {
  const window = stalenessWindow(intervalMs);
  // resolveSpecs refused such intervals already (stalenessProblem), naming the delivery.
  if (!window) throw new Error(`${id}: ${stalenessProblem(intervalMs)}`);
  const { periodMinutes, periods } = window;
  return new cloudwatch.Alarm(scope, id, {
    alarmDescription: description(formatDuration(periods * periodMinutes * 60_000)),
    metric: new cloudwatch.Metric({
      namespace: RECONCILE_METRICS.namespace,
      metricName: RECONCILE_METRICS.completed,
      dimensionsMap: { service: RECONCILE_METRICS.service, ...dimensions },
      period: Duration.minutes(periodMinutes),
      statistic: cloudwatch.Stats.SUM,
    }),
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    evaluationPeriods: periods,
    treatMissingData: cloudwatch.TreatMissingData.BREACHING,
  });
}
