import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { notify } from './alarm-actions.ts';

export interface FailureRoutesProps {
  /** @default - the alarm has no actions */
  readonly alarmTopic?: sns.ITopic;
}

/** How often Lambda retries a failed asynchronous invocation (its maximum). */
export const ASYNC_RETRY_ATTEMPTS = 2;

/**
 * Where asynchronous work that could not be done goes, so that nothing fails silently: one
 * encrypted SQS queue that is the dead-letter queue of every Scheduler schedule and EventBridge
 * rule (an event that could not be delivered to its function) and the on-failure destination of
 * the functions' asynchronous invocations (an event the function failed on after Lambda's retries,
 * or that grew too old), with an alarm as soon as one message is in it.
 */
export class FailureRoutes extends Construct {
  readonly queue: sqs.Queue;
  /** In alarm while the queue holds a message; each message names the event and why it failed. */
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: FailureRoutesProps = {}) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      // SQS-managed keys: EventBridge and Scheduler can send to the queue without a key policy.
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.alarm = new cloudwatch.Alarm(this, 'Alarm', {
      alarmDescription:
        'sluice: an asynchronous event (a schedule, an ECR push, a gate request, a reconcile) could not be delivered or failed after its retries; read the message in the failure queue for the event and the error',
      metric: this.queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    notify(this.alarm, props.alarmTopic);
  }

  /**
   * Lambda's asynchronous invocations of `fn` (schedules, rules and sluice's own `Event` invokes):
   * retried twice, dropped after `maxEventAge`, and on failure sent to the queue.
   */
  routeAsyncInvocations(fn: lambda.IFunction, maxEventAge: Duration): void {
    fn.configureAsyncInvoke({
      retryAttempts: ASYNC_RETRY_ATTEMPTS,
      maxEventAge,
      onFailure: new destinations.SqsDestination(this.queue),
    });
  }
}
