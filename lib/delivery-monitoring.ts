// The deliveries' alarms as `monitoring` chooses: four per delivery (DeliveryAlarms), or four for
// the fleet together (FleetAlarms). Built in the Sluice's scope, under the ids it always had.
import type { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { Delivery } from '../functions/core/config/index.ts';
import { DeliveryAlarms } from './alarms.ts';
import { FleetAlarms } from './fleet-alarms.ts';
import type { SluiceProps } from './props.ts';

export interface DeliveryMonitoringProps {
  readonly deliveries: readonly Delivery[];
  readonly monitoring: NonNullable<SluiceProps['monitoring']>;
  readonly blockedAlarmThreshold: Duration;
  /** @default - no actions */
  readonly alarmTopic?: sns.ITopic;
}

export interface DeliveryMonitoring {
  /** Per delivery: failed, blocked-too-long, kept-objects and (unless suspended) stale; empty for the fleet. */
  readonly alarms: ReadonlyMap<string, readonly cloudwatch.Alarm[]>;
  /** The fleet's four alarms; empty per delivery. */
  readonly fleetAlarms: readonly cloudwatch.Alarm[];
}

export function deliveryMonitoring(scope: Construct, props: DeliveryMonitoringProps): DeliveryMonitoring {
  const { deliveries, blockedAlarmThreshold, alarmTopic } = props;
  if (props.monitoring === 'fleet')
    return {
      alarms: new Map(),
      fleetAlarms: new FleetAlarms(scope, 'FleetAlarms', { deliveries, blockedAlarmThreshold, alarmTopic })
        .alarms,
    };
  const alarms = new DeliveryAlarms(scope, 'Alarms', { deliveries, blockedAlarmThreshold, alarmTopic });
  return {
    alarms: new Map(
      deliveries.map((d) => [
        d.name,
        [
          alarms.failed.get(d.name)!,
          alarms.blocked.get(d.name)!,
          alarms.kept.get(d.name)!,
          ...(alarms.stale.has(d.name) ? [alarms.stale.get(d.name)!] : []),
        ],
      ]),
    ),
    fleetAlarms: [],
  };
}
