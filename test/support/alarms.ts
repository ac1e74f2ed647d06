import { CloudWatchClient, PutMetricAlarmCommand, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import type { AlarmStateChangeEvent } from '../../functions/core/reconcile/triggers.ts';
import { uniqueName } from './testbed.ts';

/** CloudWatch on the local stand-in (through AWS_ENDPOINT_URL_CLOUDWATCH: call testbed() first). */
const cloudWatch = () => new CloudWatchClient({});

/** A metric alarm of its own name on the CloudWatch stand-in, in `state` (new alarms start in INSUFFICIENT_DATA). */
export async function createAlarm(state?: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA'): Promise<string> {
  const name = uniqueName('checkout-errors');
  await cloudWatch().send(
    new PutMetricAlarmCommand({
      AlarmName: name,
      Namespace: 'Checkout',
      MetricName: 'Errors',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 1,
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
    }),
  );
  if (state) await setAlarmState(name, state);
  return name;
}

/** Moves an alarm to `state`, as CloudWatch's SetAlarmState does. */
export async function setAlarmState(
  name: string,
  state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA',
): Promise<void> {
  await cloudWatch().send(
    new SetAlarmStateCommand({ AlarmName: name, StateValue: state, StateReason: `test: ${state}` }),
  );
}

/** The "CloudWatch Alarm State Change" event EventBridge delivers for an alarm (as AWS documents it). */
export function alarmStateChangeEvent(
  name: string,
  state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA',
  previous: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA',
  { account = '000000000000', region = 'us-east-1' } = {},
): AlarmStateChangeEvent {
  return {
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account,
    region,
    resources: [`arn:aws:cloudwatch:${region}:${account}:alarm:${name}`],
    detail: {
      alarmName: name,
      state: { value: state, reason: 'test', timestamp: '2026-11-27T10:00:00.000+0000' },
      previousState: { value: previous, reason: 'test', timestamp: '2026-11-27T09:00:00.000+0000' },
    },
  };
}
