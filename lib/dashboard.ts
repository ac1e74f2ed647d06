import { Duration, Lazy, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { Delivery, Gate, Rollout } from '../functions/core/config/index.ts';
import { GATE_STATE_RATE_MINUTES } from '../functions/gate/metrics.ts';
import { rolloutWidgets } from './dashboard-rollouts.ts';
import { deliveriesTable, deliveryWidgets, gateWidgets } from './dashboard-widgets.ts';

/** Past this many deliveries (or gates), the dashboard shows them in one table each instead of a row each. */
export const DASHBOARD_ROWS_MAX = 25;

export interface SluiceDashboardProps {
  readonly deliveries: readonly Delivery[];
  readonly gates: readonly Gate[];
  /** A row each (their members' latest runs, revisions applied, halts and resumes). */
  readonly rollouts: readonly Rollout[];
  readonly reconcileLogs: logs.ILogGroup;
  readonly gateLogs: logs.ILogGroup;
  readonly gateFunction: lambda.IFunction;
  /** A gate's Systems Manager runbook, if it has one (asked at synthesis, after the grants). */
  readonly runbookOf: (gate: string) => string | undefined;
  /** `monitoring: 'fleet'`: the reconcile metrics have no delivery dimension. */
  readonly fleet: boolean;
}

/** The CloudWatch console address of a dashboard. */
export function dashboardUrl(region: string, name: string): string {
  return `https://console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards/dashboard/${name}`;
}

/**
 * A CloudWatch dashboard of the deployment: how to approve a release; each delivery's latest run
 * (outcome, revision, time since its last success), outcomes, run durations, objects applied and
 * pruned; each gate open or closed, its requests and pending approvals, and the releases that came
 * to wait at it; each rollout's members, the revisions they applied and its halts and resumes. Log
 * widgets query the functions' log lines (no custom metrics); the stack outputs the console URL.
 */
export class SluiceDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: SluiceDashboardProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      // Named by stack, construct and region when they are known, so the console URL can be told in advance.
      dashboardName: Token.isUnresolved(stack.region)
        ? undefined
        : `${stack.stackName}-${scope.node.id}-${stack.region}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 255),
      defaultInterval: Duration.days(7),
    });
    const reconcileLogs = { logGroupName: props.reconcileLogs.logGroupName };
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({ markdown: approvalText(props), width: 24, height: 7 }),
    );
    const deliveries = props.deliveries.length;
    this.dashboard.addWidgets(deliveriesTable(reconcileLogs, Math.min(3 + deliveries, 12)));
    if (deliveries <= DASHBOARD_ROWS_MAX)
      for (const delivery of props.deliveries)
        this.dashboard.addWidgets(...deliveryWidgets(delivery, reconcileLogs, props.fleet));
    for (const gate of props.gates.slice(0, DASHBOARD_ROWS_MAX))
      this.dashboard.addWidgets(...gateWidgets(gate, reconcileLogs));
    const gateLogs = { logGroupName: props.gateLogs.logGroupName };
    for (const rollout of props.rollouts)
      this.dashboard.addWidgets(...rolloutWidgets(rollout, reconcileLogs, gateLogs));
    // Its URL is a stack output of the Sluice (lib/outputs.ts).
  }
}

/** The text widget: how to approve a release waiting at a gate, in the console and with the CLI. */
function approvalText(props: SluiceDashboardProps): string {
  const gateFunction = props.gateFunction.functionName;
  const runbooks = Lazy.string({
    produce: () => {
      const lines = props.gates.flatMap((gate) => {
        const runbook = props.runbookOf(gate.name);
        return runbook ? [`\`${gate.name}\`: runbook \`${runbook}\``] : [];
      });
      return lines.length > 0 ? lines.join(' · ') : "none yet: grantGateRequests makes a gate's runbook";
    },
  });
  return [
    '# sluice: deliveries, gates and rollouts',
    'A release held at a gate waits for what can lift it: an approval, the end of a freeze or calendar event, an alarm back to OK. `sluice status` (or the tables below) names the revision, and a `Release Waiting` event (sent to the approval topic) says why, until when and what lifts it.',
    `**Approve in the console**: Systems Manager → Automation → Execute automation → the gate's runbook (${runbooks}); give the revision and a reason; the gate's approvers approve the step, and the gate opens.`,
    `**Approve with the CLI**: \`sluice gate open <gate> --revision <tag@sha256:…> --reason <why> --function ${gateFunction}\``,
    `A gate's open/closed graph is read every ${GATE_STATE_RATE_MINUTES} minutes as deliveries meet it (alarms, freezes, calendar events and Change Calendars included); its requests are counted as they come. \`sluice gates\` is the state this minute.`,
    'A delivery shows the revision **applied** (what runs) apart from the one **held** (waiting at a gate, a rollout or the brake; `-` when none).',
  ].join('\n\n');
}
