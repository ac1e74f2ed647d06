import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { notify } from './alarm-actions.ts';

export interface AlarmedFunction {
  /** A word for the alarm's id and description: `reconcile`, `gate`, `spec`. */
  readonly name: string;
  readonly function: lambda.IFunction;
  readonly timeout: Duration;
}

export interface FunctionAlarmsProps {
  readonly functions: readonly AlarmedFunction[];
  /** @default - alarms without actions */
  readonly alarmTopic?: sns.ITopic;
}

/** The share of the timeout past which a run counts as near its limit. */
export const NEAR_TIMEOUT = 0.8;

/**
 * Per function, the failures a handler cannot report itself: an error or crash (timeout, out of
 * memory, an exception), a throttled invocation, and a run longer than 80 % of the timeout (the
 * next one may not finish). Each is judged per minute, so it is seen within minutes.
 */
export class FunctionAlarms extends Construct {
  /** Per function name: errors, throttles and near-timeout alarms. */
  readonly alarms = new Map<string, readonly cloudwatch.Alarm[]>();

  constructor(scope: Construct, id: string, props: FunctionAlarmsProps) {
    super(scope, id);
    const period = Duration.minutes(1);
    for (const { name, function: fn, timeout } of props.functions) {
      const errors = new cloudwatch.Alarm(this, `${name}-errors`, {
        alarmDescription: `sluice: the ${name} function failed (an exception, a timeout or out of memory); its log group has the error`,
        metric: fn.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      const throttles = new cloudwatch.Alarm(this, `${name}-throttles`, {
        alarmDescription: `sluice: invocations of the ${name} function were throttled (account or reserved concurrency); asynchronous ones are retried, then sent to the failure queue`,
        metric: fn.metricThrottles({ period, statistic: cloudwatch.Stats.SUM }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      const limitMs = Math.floor(timeout.toMilliseconds() * NEAR_TIMEOUT);
      const nearTimeout = new cloudwatch.Alarm(this, `${name}-near-timeout`, {
        alarmDescription: `sluice: a run of the ${name} function took more than ${NEAR_TIMEOUT * 100} % of its ${timeout.toHumanString()} timeout; the next one may be cut off`,
        metric: fn.metricDuration({ period, statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: limitMs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      for (const alarm of [errors, throttles, nearTimeout]) notify(alarm, props.alarmTopic);
      this.alarms.set(name, [errors, throttles, nearTimeout]);
    }
  }
}
