import { ArnFormat, Duration, Token, type Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { alarmNameOf } from '../functions/core/config/alarm-fields.ts';

/** How many alarm ARNs one rule's pattern lists (an event pattern holds at most 4,096 characters). */
const ARNS_PER_RULE = 20;

/**
 * The ARNs of the alarms the gates name, each once: an ARN as given, a name as an alarm of the
 * stack's account and region (where sluice reads it). A token is an ARN when it resolves to one
 * (an alarm's `Arn` attribute, an ARN built with `Fn::Join`), else a name (`alarm.alarmName`).
 */
export function gateAlarmArns(stack: Stack, alarms: readonly string[]): string[] {
  const arns = new Set<string>();
  for (const alarm of alarms)
    arns.add(
      isArn(stack, alarm)
        ? alarm
        : stack.formatArn({
            service: 'cloudwatch',
            resource: 'alarm',
            resourceName: alarm,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
    );
  return [...arns];
}

function isArn(stack: Stack, alarm: string): boolean {
  if (!Token.isUnresolved(alarm)) return alarmNameOf(alarm) !== alarm;
  const resolved: unknown = stack.resolve(alarm);
  if (typeof resolved === 'string') return resolved.startsWith('arn:');
  const getAtt = (resolved as { 'Fn::GetAtt'?: unknown[] } | null)?.['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return getAtt[1] === 'Arn';
  const join = (resolved as { 'Fn::Join'?: [string, unknown[]] } | null)?.['Fn::Join'];
  return Array.isArray(join) && typeof join[1][0] === 'string' && join[1][0].startsWith('arn:');
}

/** What reading the gates' alarms takes: DescribeAlarms on those alarms only. */
export function describeAlarmsStatement(alarmArns: readonly string[]): iam.PolicyStatement {
  return new iam.PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: [...alarmArns] });
}

export interface AlarmStateTriggersProps {
  /** The alarms whose state changes reconcile the deliveries using the gates that name them. */
  readonly alarmArns: readonly string[];
  readonly reconcileFunction: lambda.IFunction;
  /** Where an event the rule could not deliver to the function goes. */
  readonly deadLetterQueue: sqs.IQueue;
}

/**
 * EventBridge rules on the gates' alarms' state changes ("CloudWatch Alarm State Change", by the
 * alarms' ARNs), invoking the reconcile function with the event: it reconciles the deliveries
 * using a gate that names the alarm when it leaves ALARM, so held releases go out the moment it
 * clears. CloudWatch sends these events to the default bus of the alarm's own account and
 * region; for an alarm elsewhere the rule never fires and the delivery interval catches up.
 */
export class AlarmStateTriggers extends Construct {
  readonly rules: events.Rule[] = [];

  constructor(scope: Construct, id: string, props: AlarmStateTriggersProps) {
    super(scope, id);
    for (let start = 0; start < props.alarmArns.length; start += ARNS_PER_RULE) {
      const rule = new events.Rule(this, `AlarmStateChange${start / ARNS_PER_RULE + 1}`, {
        description: 'sluice: reconcile the deliveries behind an alarm gate when its alarm changes state',
        eventPattern: {
          source: ['aws.cloudwatch'],
          detailType: ['CloudWatch Alarm State Change'],
          resources: props.alarmArns.slice(start, start + ARNS_PER_RULE),
        },
        targets: [
          new targets.LambdaFunction(props.reconcileFunction, {
            retryAttempts: 2,
            maxEventAge: Duration.hours(1),
            deadLetterQueue: props.deadLetterQueue,
          }),
        ],
      });
      this.rules.push(rule);
    }
  }
}
