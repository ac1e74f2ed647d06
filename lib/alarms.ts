import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { formatDuration, type Delivery } from '../functions/core/config/index.ts';
import { RECONCILE_METRICS } from '../functions/reconcile/metrics.ts';

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

/** Per delivery: an alarm when a reconcile fails, and one when it has been held too long (gates, the mass-deletion brake, dependencies). */
export class DeliveryAlarms extends Construct {
  readonly failed = new Map<string, cloudwatch.Alarm>();
  readonly blocked = new Map<string, cloudwatch.Alarm>();

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
        alarmDescription: `sluice: delivery ${delivery.name} has been held (closed gates, the mass-deletion brake or a dependency not ready) for more than ${formatDuration(threshold.toMilliseconds())}`,
        metric: deliveryMetric(RECONCILE_METRICS.blockedSeconds, delivery, {
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: threshold.toSeconds({ integral: false }),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      for (const alarm of [failed, blocked]) {
        if (!props.alarmTopic) continue;
        alarm.addAlarmAction(new actions.SnsAction(props.alarmTopic));
        alarm.addOkAction(new actions.SnsAction(props.alarmTopic));
      }
      this.failed.set(delivery.name, failed);
      this.blocked.set(delivery.name, blocked);
    }
  }
}
