// The construct's CloudWatch dashboard (per delivery, per gate, how to approve, its URL as an
// output) and the rules sending Release Waiting events to the approval topic, in the synthesized template.
import { RELEASE_WAITING_LOG_PREFIX } from '../../functions/core/reconcile/events.ts';
import { Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  functionId,
  largeVariant,
  logicalId,
  refOf,
  REGION,
  SEED_GATES,
  seedDelivery,
  synth,
} from './synth.ts';
import { dashboardBody, widgetTitles } from './dashboard-body.ts';

describe('the dashboard', () => {
  const { template, sluice, stack } = synth((cluster, s) => largeVariant(cluster, s), {
    then: (sluice, s) =>
      sluice.grantGateRequests(
        new iam.Role(s, 'Approver', { assumedBy: new iam.AccountRootPrincipal() }),
        'release-approval',
      ),
  });
  const body = dashboardBody(template);
  const titles = widgetTitles(body);

  it('has a row per delivery: latest run, outcomes, run durations, objects applied and pruned', () => {
    for (const delivery of ['oddy-test', 'platform', 'eu-app', 'shared']) {
      expect(titles).toEqual(
        expect.arrayContaining([
          `Delivery ${delivery}: latest run`,
          `Delivery ${delivery}: outcomes and time held`,
          `Delivery ${delivery}: run duration (ms)`,
          `Delivery ${delivery}: objects applied and pruned`,
        ]),
      );
      expect(body).toContain(`filter delivery = \\"${delivery}\\" and ispresent(outcome)`);
      expect(body).toContain(`"delivery","${delivery}"`);
    }
    // The log widgets query the reconcile function's log group.
    const reconcileLogs = logicalId(template, 'AWS::Logs::LogGroup', (_, id) => id.includes('Reconcile'));
    expect(body).toContain(JSON.stringify(refOf(reconcileLogs)));
    expect(body).toContain('secondsSinceSuccess');
  });

  it('has a row per gate: open or closed, requests and pending approvals, releases waiting', () => {
    for (const gate of [
      'no-deploy-friday',
      'sre-approval',
      'maintenance',
      'release-approval',
      'two-person',
    ]) {
      expect(titles).toEqual(
        expect.arrayContaining([
          `Gate ${gate}: open (1) or closed (0), alarms, freezes and calendars included (read every 5 min)`,
          gate === 'two-person' ? `Gate ${gate}: requests and pending approvals` : `Gate ${gate}: requests`,
          `Gate ${gate}: releases that came to wait at it`,
        ]),
      );
      // Releases waiting: the log lines the reconcile function writes with the shared prefix.
      expect(body).toContain(
        `filter message like \\"${RELEASE_WAITING_LOG_PREFIX}\\" and message like \\"gate '${gate}'\\"`,
      );
      // The open/closed graph is the effective state, read on a schedule, not the requests.
      expect(body).toContain(`"GateState","gate","${gate}","service","sluice-gate"`);
      expect(body).toContain(`"GateOpen","gate","${gate}","service","sluice-gate"`);
      template.hasResourceProperties('AWS::Scheduler::Schedule', {
        ScheduleExpression: 'rate(5 minutes)',
        Target: Match.objectLike({ Input: JSON.stringify({ gate, action: 'status' }) }),
      });
    }
    // Pending approvals only where approvals are gathered (approvers > 1).
    expect(body).toContain('approvals pending (of 2)');
    expect(body).not.toContain('approvals pending (of 1)');
  });

  it('shows the revision applied apart from the one held', () => {
    expect(titles).toContain(
      'Deliveries: latest run (outcome, revision applied and revision held, seconds since the last success)',
    );
    expect(body).toContain('latest(appliedRevision) as applied, latest(heldRevision) as held');
    expect(body).not.toContain('latest(revision)');
  });

  it('explains how to approve: the runbooks in the console, and the CLI line with the gate function', () => {
    const gate = functionId(template, 'open and close gates');
    expect(body).toContain('Systems Manager → Automation → Execute automation');
    expect(body).toContain(
      `\`release-approval\`: runbook \`${Stack.of(sluice).resolve(sluice.gateRunbookName('release-approval'))}\``,
    );
    expect(body).toContain(
      `sluice gate open <gate> --revision <tag@sha256:…> --reason <why> --function ${JSON.stringify(refOf(gate))}`,
    );
  });

  it('is exposed, named by stack, construct and region, and its console URL is an output', () => {
    const name = `${stack.stackName}-Sluice-${REGION}`;
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: name });
    expect(sluice.dashboard).toBeDefined();
    const outputs = Object.values(
      template.findOutputs('*', { Description: Match.stringLikeRegexp('dashboard') }),
    );
    expect(outputs).toHaveLength(1);
    expect(JSON.stringify(outputs[0]!.Value)).toContain(`#dashboards/dashboard/`);
    expect(JSON.stringify(outputs[0]!.Value)).toContain(
      'https://console.aws.amazon.com/cloudwatch/home?region=',
    );
  });

  it("with monitoring: fleet, counts each delivery's outcomes from its log lines", () => {
    const fleet = dashboardBody(
      synth((cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)], monitoring: 'fleet' }))
        .template,
    );
    expect(widgetTitles(fleet)).toContain('Delivery oddy-test: outcomes');
    expect(fleet).not.toContain('"delivery","oddy-test"');
  });

  it('dashboard: false creates none, and no dashboard output', () => {
    const { template: none, sluice: without } = synth((cluster) => ({
      gates: SEED_GATES,
      deliveries: [seedDelivery(cluster)],
      dashboard: false,
    }));
    none.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    const outputs = Object.keys(none.findOutputs('*'));
    expect(outputs).toContain('SluiceTableName');
    expect(outputs.filter((id) => id.includes('Dashboard'))).toEqual([]);
    expect(without.dashboard).toBeUndefined();
  });
});

describe('Release Waiting notifications', () => {
  it('per gate, approvals go to the approval topic with the CLI line; what no approval lifts goes there without "approve", with who may break the glass', () => {
    const { template, sluice } = synth(
      (cluster, stack) => ({
        gates: SEED_GATES,
        deliveries: [seedDelivery(cluster)],
        eventBus: events.EventBus.fromEventBusName(stack, 'Bus', 'platform-events'),
        alarmTopic: sns.Topic.fromTopicArn(stack, 'Alarms', `arn:aws:sns:${REGION}:${ACCOUNT}:oncall`),
        approvalTopic: sns.Topic.fromTopicArn(
          stack,
          'Approvals',
          `arn:aws:sns:${REGION}:${ACCOUNT}:AutomationApprovals`,
        ),
      }),
      {
        then: (s, stack) => {
          s.grantGateRequests(
            new iam.Role(stack, 'Approver', { assumedBy: new iam.AccountRootPrincipal() }),
            'sre-approval',
          );
          s.grantBreakGlass(
            iam.Role.fromRoleArn(stack, 'Oncall', `arn:aws:iam::${ACCOUNT}:role/oncall-lead`),
          );
        },
      },
    );
    const gate = functionId(template, 'open and close gates');
    const queue = logicalId(template, 'AWS::SQS::Queue');
    expect([...sluice.releaseWaitingRules.keys()]).toEqual(['no-deploy-friday', 'sre-approval']);
    expect([...sluice.releaseHeldRules.keys()]).toEqual(['no-deploy-friday', 'sre-approval']);
    const target = Match.objectLike({
      Arn: `arn:aws:sns:${REGION}:${ACCOUNT}:AutomationApprovals`,
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
      InputTransformer: Match.objectLike({
        InputPathsMap: Match.objectLike({ 'detail-message': '$.detail.message' }),
      }),
    });
    const rules = Object.values(template.findResources('AWS::Events::Rule')).filter((r) =>
      JSON.stringify(r).includes('Release Waiting'),
    );
    const message = (name: string, lift: unknown) =>
      JSON.stringify(
        rules.find(
          (r) =>
            JSON.stringify(r).includes(`"gate":["${name}"]`) &&
            JSON.stringify(r.Properties.EventPattern.detail.lift) === JSON.stringify(lift),
        )!.Properties.Targets[0].InputTransformer.InputTemplate,
      );
    for (const name of ['no-deploy-friday', 'sre-approval']) {
      for (const lift of [['approve'], [{ 'anything-but': ['approve'] }]])
        template.hasResourceProperties('AWS::Events::Rule', {
          EventBusName: 'platform-events',
          EventPattern: {
            source: ['sluice'],
            'detail-type': ['Release Waiting'],
            detail: { gate: [name], lift },
          },
          Targets: [target],
        });
      // An approval: the notice (it names the runbook) ends with the CLI line; the gate function is added.
      expect(message(name, ['approve'])).toContain(`<detail-message> --function ",{"Ref":"${gate}"}`);
      // No approval lifts it: no "approve", no gate open; who may break the glass, and how.
      const held = message(name, [{ 'anything-but': ['approve'] }]);
      expect(held).not.toMatch(/approve|gate open/i);
      expect(held).toMatch(
        new RegExp(
          `Break-glass, by arn:aws:iam::${ACCOUNT}:role/oncall-lead only \\(or the runbook \\S+ in the console\\): sluice gate override ${name} --revision <detail-revision>`,
        ),
      );
    }
    // The reconcile function knows the runbooks' names for its notices.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('reconcile deliveries'),
      Environment: {
        Variables: Match.objectLike({ SLUICE_GATE_RUNBOOKS: Match.stringLikeRegexp('sre-approval') }),
      },
    });
  });

  it('none without an event bus (the reconcile function publishes no events then) or without a topic', () => {
    for (const props of [
      (stack: import('aws-cdk-lib').Stack) => ({
        alarmTopic: sns.Topic.fromTopicArn(stack, 'Alarms', `arn:aws:sns:${REGION}:${ACCOUNT}:oncall`),
      }),
      (stack: import('aws-cdk-lib').Stack) => ({
        eventBus: events.EventBus.fromEventBusName(stack, 'Bus', 'platform-events'),
      }),
    ]) {
      const { template, sluice } = synth((cluster, stack) => ({
        gates: SEED_GATES,
        deliveries: [seedDelivery(cluster)],
        ...props(stack),
      }));
      expect(sluice.releaseWaitingRules.size).toBe(0);
      expect(JSON.stringify(template.findResources('AWS::Events::Rule'))).not.toContain('Release Waiting');
    }
  });
});
