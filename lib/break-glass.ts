import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { urlEntry } from './function-entry.ts';
import { Construct } from 'constructs';
import { BREAK_GLASS_ALIAS, GATE_OVERRIDE } from '../functions/core/gates/contract.ts';
import { GATE_METRICS } from '../functions/gate/metrics.ts';
import { notify } from './alarm-actions.ts';
import { BreakGlassRunbook } from './break-glass-runbook.ts';

export interface BreakGlassProps {
  readonly gateFunction: lambda.Function;
  /** The gate function's role: it reads the break-glass runbook's executions. */
  readonly gateRole: iam.IRole;
  /** Where the alarm and the override's message go. @default - none */
  readonly alarmTopic?: sns.ITopic;
  /** The bus the gate function publishes `Gate Override` events to. @default - none */
  readonly eventBus?: events.IEventBus;
  readonly deadLetterQueue: sqs.IQueue;
}

/**
 * The break-glass entry of the gate function (alias `break_glass` with an AWS_IAM function URL):
 * IAM decides who may send an override, apart from who may open or close gates. Made on the first
 * grantBreakGlass, with its alarm (any override made: BreakGlassOverride ≥ 1) and, with an event
 * bus and an alarm topic, a rule sending each `Gate Override` event to the topic as a message
 * naming the gates, the revision, who and why.
 */
export class BreakGlass extends Construct {
  readonly alias: lambda.Alias;
  readonly url: lambda.FunctionUrl;
  readonly alarm: cloudwatch.Alarm;
  readonly rule?: events.Rule;
  /** The console's way to break the glass: a Systems Manager runbook grantees may start. */
  readonly runbook: BreakGlassRunbook;

  constructor(scope: Construct, id: string, props: BreakGlassProps) {
    super(scope, id);
    ({ alias: this.alias, url: this.url } = urlEntry(this, 'Alias', props.gateFunction, BREAK_GLASS_ALIAS));
    this.runbook = new BreakGlassRunbook(this, 'Runbook', {
      entry: this.alias,
      gateFunction: props.gateFunction,
      gateRole: props.gateRole,
    });
    this.alarm = new cloudwatch.Alarm(this, 'Alarm', {
      alarmDescription:
        'sluice: a break-glass override let a revision through closed gates (who, what and why: sluice gate history <gate>, or the Gate Override event)',
      metric: new cloudwatch.Metric({
        namespace: GATE_METRICS.namespace,
        metricName: GATE_METRICS.override,
        dimensionsMap: { service: GATE_METRICS.service },
        period: Duration.minutes(1),
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    notify(this.alarm, props.alarmTopic);
    if (props.eventBus && props.alarmTopic) {
      const field = (path: string) => events.EventField.fromPath(`$.detail.${path}`);
      this.rule = new events.Rule(this, 'Overrides', {
        eventBus: props.eventBus,
        description: 'sluice: a break-glass override was made: tell the alarm topic who, what and why',
        eventPattern: { source: ['sluice'], detailType: [GATE_OVERRIDE] },
      });
      this.rule.addTarget(
        new targets.SnsTopic(props.alarmTopic, {
          deadLetterQueue: props.deadLetterQueue,
          message: events.RuleTargetInput.fromText(
            `sluice BREAK-GLASS: ${field('madeBy')} let revision ${field('revisionShown')} through gates ${field('gatesShown')} until ${field('endsAt')}: ${field('reason')}`,
          ),
        }),
      );
    }
  }

  /**
   * Lets `grantee` send signed overrides (invoke the entry's URL, and the function only via it, and
   * look it up) and start the break-glass runbook in the console.
   */
  grant(grantee: iam.IGrantable): iam.Grant {
    return this.url
      .grantInvokeUrl(grantee)
      .combine(
        iam.Grant.addToPrincipal({
          grantee,
          actions: ['lambda:GetFunctionUrlConfig'],
          resourceArns: [this.alias.functionArn],
        }),
      )
      .combine(this.runbook.grant(grantee));
  }
}
