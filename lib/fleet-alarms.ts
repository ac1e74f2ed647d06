import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { formatDuration, type Delivery } from '../functions/core/config/index.ts';
import { RECONCILE_METRICS } from '../functions/reconcile/metrics.ts';
import { notify } from './alarm-actions.ts';
import { staleAlarm } from './alarms.ts';

export interface FleetAlarmsProps {
  readonly deliveries: readonly Delivery[];
  readonly blockedAlarmThreshold: Duration;
  /** @default - no actions */
  readonly alarmTopic?: sns.ITopic;
}

/** A reconcile metric of all deliveries together (the reconcile function's `fleet` metrics). */
const fleetMetric = (metricName: string, options: cloudwatch.MetricOptions) =>
  new cloudwatch.Metric({
    namespace: RECONCILE_METRICS.namespace,
    metricName,
    dimensionsMap: { service: RECONCILE_METRICS.service },
    ...options,
  });

/**
 * Four alarms for all deliveries (`monitoring: 'fleet'`), where DeliveryAlarms makes four per
 * delivery: a reconcile failed; a delivery has been held too long; a run kept a CRD or Namespace; no reconcile has completed
 * for three of the shortest interval (the function or its schedules are broken). Which delivery:
 * the reconcile function's log line (`reconciled: …`, with `delivery` and `outcome`) and
 * `sluice status`. A single delivery whose schedule alone stopped firing raises no alarm here;
 * a schedule that could not invoke the function does (the failure queue's alarm).
 */
export class FleetAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: FleetAlarmsProps) {
    super(scope, id);
    const threshold = props.blockedAlarmThreshold;
    this.alarms.push(
      new cloudwatch.Alarm(this, 'Failed', {
        alarmDescription:
          'sluice: a reconcile failed; which one: the reconcile function\'s log lines with "outcome":"Failed", or sluice status',
        metric: fleetMetric(RECONCILE_METRICS.failed, {
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.SUM,
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(this, 'Blocked', {
        alarmDescription: `sluice: a delivery has been held (closed gates, the mass-deletion brake, a dependency not ready, a busy cluster) for more than ${formatDuration(threshold.toMilliseconds())}; sluice status shows which`,
        // Planned holds (freezes, calendar events, Change Calendars) count 0: no page through a planned freeze.
        metric: fleetMetric(RECONCILE_METRICS.unplannedBlockedSeconds, {
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: threshold.toSeconds({ integral: false }),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(this, 'Kept', {
        alarmDescription:
          'sluice: a delivery keeps a CRD or Namespace its revision leaves out, as it holds objects the delivery does not delete; sluice status shows which',
        metric: fleetMetric(RECONCILE_METRICS.kept, {
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
    const active = props.deliveries.filter((d) => !d.suspend);
    if (active.length > 0) {
      const shortest = Math.min(...active.map((d) => d.intervalMs));
      this.alarms.push(
        staleAlarm(this, 'Stale', {
          intervalMs: shortest,
          dimensions: {},
          description: (window) =>
            `sluice: no reconcile of any delivery has completed in ${window}: the reconcile function fails, times out or is not invoked; see its errors alarm and the failure queue`,
        }),
      );
    }
    for (const alarm of this.alarms) notify(alarm, props.alarmTopic);
  }
}
