// cfn-lint (pinned, from PyPI, provisioned like the other local components) on the synthesized
// templates of the example app and of a large variant using every feature: no error, and the
// failure routes and alarms the construct promises are in both.
import * as iam from 'aws-cdk-lib/aws-iam';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cfnLint, describeMatch, readTemplate } from '../support/cfn-lint.ts';
import { largeVariant, synth, synthExampleApp } from './synth.ts';

process.env.CDK_VALIDATION = 'false';

const exampleApp = await synthExampleApp({});
// With a gate runbook: an approver (open requests) and a requester (grantRequestApproval); and break-glass.
const large = synth(largeVariant, {
  nag: true,
  then: (sluice, stack) => {
    const gate = sluice.specs.config.gates[0]!.name;
    sluice.grantGateRequests(
      new iam.Role(stack, 'Approver', { assumedBy: new iam.AccountRootPrincipal() }),
      gate,
    );
    sluice.grantRequestApproval(
      new iam.Role(stack, 'Requester', { assumedBy: new iam.AccountRootPrincipal() }),
      gate,
    );
    // With the break-glass entry, its alarm and its message rule.
    sluice.grantBreakGlass(new iam.Role(stack, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() }));
  },
});
const largePath = join(exampleApp.templatePath, '..', 'Large.template.json');
writeFileSync(largePath, JSON.stringify(large.template.toJSON()));
afterAll(() => exampleApp.cleanup());

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
const resourcesOf = (path: string) => (readTemplate(path) as { Resources: Resources }).Resources;
const ofType = (resources: Resources, type: string) =>
  Object.values(resources).filter((resource) => resource.Type === type);

describe('cfn-lint', () => {
  it('finds no error in the example app or the large variant', () => {
    const matches = cfnLint([exampleApp.templatePath, largePath]);
    expect(matches.filter((m) => m.Level === 'Error').map(describeMatch)).toEqual([]);
  });
});

describe.each([
  ['the example app', () => resourcesOf(exampleApp.templatePath)],
  ['the large variant', () => resourcesOf(largePath)],
])('%s', (_, resources) => {
  it('every schedule and rule target has the failure queue as its dead-letter queue', () => {
    const all = resources();
    const queue = Object.keys(all).find((id) => all[id]!.Type === 'AWS::SQS::Queue');
    const targets = [
      ...ofType(all, 'AWS::Scheduler::Schedule').map((s) => s.Properties.Target),
      ...ofType(all, 'AWS::Events::Rule').flatMap((r) => r.Properties.Targets as unknown[]),
    ] as { DeadLetterConfig?: unknown }[];
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets)
      expect(target.DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [queue, 'Arn'] } });
  });

  it('the functions invoked asynchronously route failures to the queue; every function has its three alarms', () => {
    const all = resources();
    // The reconcile and gate functions, the `schedules` alias the gates' crons invoke, and the
    // alias taking ECR push records (preventSelfApproval).
    const aliases = ofType(all, 'AWS::Lambda::Alias').filter((a) =>
      ['schedules', 'record_pushes'].includes(String(a.Properties.Name)),
    );
    const configs = ofType(all, 'AWS::Lambda::EventInvokeConfig');
    expect(configs).toHaveLength(2 + aliases.length);
    expect(configs.filter((c) => c.Properties.Qualifier === '$LATEST')).toHaveLength(2);
    const functions = ofType(all, 'AWS::Lambda::Function').filter((f) =>
      String(f.Properties.Description ?? '').startsWith('sluice:'),
    );
    const lambdaAlarms = ofType(all, 'AWS::CloudWatch::Alarm').filter(
      (a) => a.Properties.Namespace === 'AWS/Lambda',
    );
    expect(lambdaAlarms.map((a) => a.Properties.MetricName).sort()).toEqual(
      functions.flatMap(() => ['Duration', 'Errors', 'Throttles']).sort(),
    );
  });

  it('each delivery that is not suspended has a staleness alarm; the queue has one', () => {
    const all = resources();
    const deliveries = ofType(all, 'Custom::SluiceDelivery');
    const alarms = ofType(all, 'AWS::CloudWatch::Alarm');
    expect(alarms.filter((a) => a.Properties.MetricName === 'ReconcileCompleted')).toHaveLength(
      deliveries.length,
    );
    expect(alarms.filter((a) => a.Properties.Namespace === 'AWS/SQS')).toHaveLength(1);
  });
});
