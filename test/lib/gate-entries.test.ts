// Who may open which gate: one AWS_IAM function URL per gate and action, and grants to exactly one.
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { logicalId, refOf, statementsOf, synth } from './synth.ts';

const { template } = synth(undefined, {
  then: (sluice, stack) => {
    const approver = new iam.Role(stack, 'Approver', { assumedBy: new iam.AccountRootPrincipal() });
    sluice.grantGateRequests(approver, 'sre-approval', { actions: ['open'] });
  },
});

describe('gate entries', () => {
  it('gives each gate an alias and an AWS_IAM function URL per action', () => {
    const aliases = Object.values(template.findResources('AWS::Lambda::Alias'))
      .map((alias) => (alias.Properties as { Name: string }).Name)
      .filter((name) => name.includes('_'));
    expect(aliases.sort()).toEqual([
      'close_no-deploy-friday',
      'close_sre-approval',
      'open_no-deploy-friday',
      'open_sre-approval',
    ]);
    const urls = Object.values(template.findResources('AWS::Lambda::Url')).map(
      (url) => (url.Properties as { AuthType: string }).AuthType,
    );
    expect(urls).toEqual(['AWS_IAM', 'AWS_IAM', 'AWS_IAM', 'AWS_IAM']);
  });

  it("grantGateRequests(role, 'sre-approval', { actions: ['open'] }) grants that entry (and approving in its runbook) and nothing else", () => {
    const role = logicalId(template, 'AWS::IAM::Role', (_, id) => id.startsWith('Approver'));
    const open = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'open_sre-approval');
    const byAction = Object.fromEntries(
      statementsOf(template, role).map((statement) => [statement.Action as string, statement]),
    );
    expect(Object.keys(byAction).sort()).toEqual([
      'lambda:GetFunctionUrlConfig',
      'lambda:InvokeFunction',
      'lambda:InvokeFunctionUrl',
      'ssm:SendAutomationSignal,ssm:GetAutomationExecution,ssm:DescribeAutomationStepExecutions',
    ]);
    expect(byAction['lambda:InvokeFunctionUrl']).toMatchObject({
      Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      Resource: refOf(open),
    });
    expect(byAction['lambda:InvokeFunction']).toMatchObject({
      Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } },
      Resource: refOf(open),
    });
    expect(byAction['lambda:GetFunctionUrlConfig']).toMatchObject({ Resource: refOf(open) });
  });

  it('names an unknown gate or action and lists the gates', () => {
    synth(undefined, {
      then: (sluice, stack) => {
        const role = new iam.Role(stack, 'Someone', { assumedBy: new iam.AccountRootPrincipal() });
        expect(() => sluice.grantGateRequests(role, 'sre-aproval')).toThrow(
          "gate 'sre-aproval' is not one of this Sluice's gates (no-deploy-friday, sre-approval)",
        );
        expect(() =>
          sluice.grantGateRequests(role, 'sre-approval', { actions: ['unlock' as never] }),
        ).toThrow("gate action 'unlock' is not one of open, close");
      },
    });
  });
});
