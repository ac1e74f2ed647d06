import { Lazy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Gate } from '../functions/core/config/index.ts';
import { RELEASE_WAITING } from '../functions/core/reconcile/events.ts';

/** Who may break the glass, and its runbook (after grantBreakGlass). */
export interface BreakGlassNotice {
  readonly runbook: string;
  /** The principals granted it (ARNs, resolved at deploy). */
  readonly grantees: readonly string[];
}

export interface ReleaseNotificationsProps {
  readonly gates: readonly Gate[];
  /** The bus the reconcile function publishes its events to. */
  readonly eventBus: events.IEventBus;
  readonly topic: sns.ITopic;
  readonly gateFunction: lambda.IFunction;
  /** Break-glass, if granted (asked at synthesis, after the grants). */
  readonly breakGlassOf: () => BreakGlassNotice | undefined;
  readonly deadLetterQueue: sqs.IQueue;
}

/**
 * Per gate, two EventBridge rules sending the reconcile function's `Release Waiting` events to an
 * SNS topic as the event's own notice (why it waits, until when, what lifts it; gates/notice.ts):
 * - `lift: approve`: the notice ends with the CLI line, to which the message adds the gate
 *   function's name (the reconcile function cannot know it: the gate function already names it);
 * - anything else (a freeze or calendar to wait out, an alarm to fix, a broken gate): the notice,
 *   and who may break the glass and how, or that no one may (by a third rule when the event has
 *   no revision, so no field renders empty). Nothing there says "approve".
 * Undeliverable messages go to the failure queue.
 */
export class ReleaseNotifications extends Construct {
  /** Per gate, the rule of the holds an approval lifts. */
  readonly rules = new Map<string, events.Rule>();
  /** Per gate, the rule of the holds no approval lifts. */
  readonly holdRules = new Map<string, events.Rule>();

  constructor(scope: Construct, id: string, props: ReleaseNotificationsProps) {
    super(scope, id);
    const functionName = props.gateFunction.functionName;
    for (const gate of props.gates) {
      const notice = events.EventField.fromPath('$.detail.message');
      const revision = events.EventField.fromPath('$.detail.revision');
      const pattern = (lift: unknown[], revisionKnown?: unknown[]) => ({
        source: ['sluice'],
        detailType: [RELEASE_WAITING],
        detail: { gate: [gate.name], lift, ...(revisionKnown && { revision: revisionKnown }) },
      });
      const target = (message: string) =>
        new targets.SnsTopic(props.topic, {
          deadLetterQueue: props.deadLetterQueue,
          message: events.RuleTargetInput.fromText(message),
        });
      const approve = new events.Rule(this, `${gate.name}-waiting`, {
        eventBus: props.eventBus,
        description: `sluice: a release waits at gate ${gate.name} for approval: tell the approvers`,
        eventPattern: pattern(['approve']),
      });
      // The line ends the command with a space: a copied line takes no quote or stop of the message.
      approve.addTarget(
        target(`${notice} --function ${functionName} — each approver runs it once, signed in as themselves.`),
      );
      this.rules.set(gate.name, approve);

      // Break-glass is granted after the construct: asked at synthesis.
      const who = Lazy.string({
        produce: () => {
          const granted = props.breakGlassOf();
          return granted
            ? `by ${granted.grantees.join(', ')} only`
            : 'no one is granted it in this stack (grantBreakGlass)';
        },
      });
      const inConsole = Lazy.string({
        produce: () => {
          const granted = props.breakGlassOf();
          return granted ? ` (or the runbook ${granted.runbook} in the console)` : '';
        },
      });
      // EventBridge takes every <name> in a template for a placeholder (PutTargets refuses one
      // it does not know, and < > cannot be escaped): the command's own arguments are in capitals.
      const command = (revisionArg: string) =>
        `sluice gate override ${gate.name} --revision ${revisionArg} --for DURATION --reason WHY --function ${functionName}`;
      const announced = ' — every override is announced and audited.';
      const breakGlass = ` Break-glass, ${who}${inConsole}: ${command(`${revision}`)}${announced}`;
      const held = new events.Rule(this, `${gate.name}-held`, {
        eventBus: props.eventBus,
        description: `sluice: a release is held at gate ${gate.name} by what no approval lifts: say until when`,
        eventPattern: pattern([{ 'anything-but': ['approve'] }], [{ exists: true }]),
      });
      held.addTarget(target(`${notice}${breakGlass}`));
      // Without a revision (the registry could not be reached) the path would render empty.
      const heldUnresolved = new events.Rule(this, `${gate.name}-held-unresolved`, {
        eventBus: props.eventBus,
        description: `sluice: a release whose revision is not known yet is held at gate ${gate.name} by what no approval lifts`,
        eventPattern: pattern([{ 'anything-but': ['approve'] }], [{ exists: false }]),
      });
      heldUnresolved.addTarget(
        target(
          `${notice} Break-glass, ${who}${inConsole}, once sluice status names the held revision: ${command('REVISION')}${announced}`,
        ),
      );
      this.holdRules.set(gate.name, held);
    }
  }
}
