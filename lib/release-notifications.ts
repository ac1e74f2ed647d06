import { Lazy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Gate } from '../functions/core/config/index.ts';
import { RELEASE_WAITING } from '../functions/core/reconcile/events.ts';

export interface ReleaseNotificationsProps {
  readonly gates: readonly Gate[];
  /** The bus the reconcile function publishes its events to. */
  readonly eventBus: events.IEventBus;
  readonly topic: sns.ITopic;
  readonly gateFunction: lambda.IFunction;
  /** A gate's Systems Manager runbook, if it has one (asked at synthesis, after the grants). */
  readonly runbookOf: (gate: string) => string | undefined;
  readonly deadLetterQueue: sqs.IQueue;
}

/**
 * Per gate, an EventBridge rule sending the reconcile function's `Release Waiting` events for it
 * to an SNS topic, as a message that names the delivery, the revision and how to approve it (the
 * gate's runbook, and the CLI line with the gate function's name, which the event itself cannot
 * know). Undeliverable messages go to the failure queue.
 */
export class ReleaseNotifications extends Construct {
  readonly rules = new Map<string, events.Rule>();

  constructor(scope: Construct, id: string, props: ReleaseNotificationsProps) {
    super(scope, id);
    for (const gate of props.gates) {
      const delivery = events.EventField.fromPath('$.detail.delivery');
      const revision = events.EventField.fromPath('$.detail.revision');
      // Runbooks are made by grants, after the construct: asked at synthesis.
      const runbook = Lazy.string({
        produce: () => {
          const name = props.runbookOf(gate.name);
          return name ? ` Approve it in the console: Systems Manager, Automation, runbook ${name}.` : '';
        },
      });
      const rule = new events.Rule(this, `${gate.name}-waiting`, {
        eventBus: props.eventBus,
        description: `sluice: a release waits at gate ${gate.name}: tell the approvers`,
        eventPattern: { source: ['sluice'], detailType: [RELEASE_WAITING], detail: { gate: [gate.name] } },
      });
      rule.addTarget(
        new targets.SnsTopic(props.topic, {
          deadLetterQueue: props.deadLetterQueue,
          message: events.RuleTargetInput.fromText(
            [
              `sluice: delivery ${delivery} waits at gate ${gate.name} with revision ${revision}.${runbook}`,
              `Approve it with: sluice gate open ${gate.name} --revision ${revision} --reason <why> --function ${props.gateFunction.functionName}`,
            ].join(' '),
          ),
        }),
      );
      this.rules.set(gate.name, rule);
    }
  }
}
