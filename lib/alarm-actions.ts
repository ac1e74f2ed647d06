import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';

/** Sends the alarm's ALARM and OK transitions to `topic`, when there is one. */
export function notify(alarm: cloudwatch.Alarm, topic: sns.ITopic | undefined): void {
  if (!topic) return;
  alarm.addAlarmAction(new actions.SnsAction(topic));
  alarm.addOkAction(new actions.SnsAction(topic));
}
