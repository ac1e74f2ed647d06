// Who may break the glass: an entry of its own (alias break_glass), which grantBreakGlass allows
// and grantGateRequests never does; an alarm on every override; the override's message on the
// alarm topic.
import { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { SEED_GATES, logicalId, refOf, seedDelivery, statementsOf, synth, seedSynth } from './synth.ts';

const { template, sluice: sluiceOf } = synth(
  (cluster, stack) => ({
    gates: SEED_GATES,
    deliveries: [seedDelivery(cluster)],
    alarmTopic: new sns.Topic(stack, 'Alarms'),
    eventBus: new events.EventBus(stack, 'Bus'),
  }),
  {
    then: (sluice, stack) => {
      const root = new iam.AccountRootPrincipal();
      sluice.grantBreakGlass(new iam.Role(stack, 'Oncall', { assumedBy: root }));
      sluice.grantGateRequests(new iam.Role(stack, 'Approver', { assumedBy: root }), 'sre-approval');
    },
  },
);
const roleId = (prefix: string) => logicalId(template, 'AWS::IAM::Role', (_, id) => id.startsWith(prefix));
const breakGlass = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'break_glass');

describe('grantBreakGlass', () => {
  it('lets the grantee invoke the break_glass entry URL (and the function only via it) and look it up', () => {
    const byAction = Object.fromEntries(
      statementsOf(template, roleId('Oncall')).map((statement) => [statement.Action as string, statement]),
    );
    expect(Object.keys(byAction).sort()).toEqual([
      'iam:PassRole',
      'lambda:GetFunctionUrlConfig',
      'lambda:InvokeFunction',
      'lambda:InvokeFunctionUrl',
      'ssm:DescribeDocument,ssm:GetDocument',
      'ssm:GetAutomationExecution,ssm:DescribeAutomationStepExecutions',
      'ssm:StartAutomationExecution',
    ]);
    expect(byAction['lambda:InvokeFunctionUrl']).toMatchObject({
      Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      Resource: refOf(breakGlass),
    });
    expect(byAction['lambda:InvokeFunction']).toMatchObject({
      Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } },
      Resource: refOf(breakGlass),
    });
    template.hasResourceProperties('AWS::Lambda::Url', { Qualifier: 'break_glass', AuthType: 'AWS_IAM' });
  });

  it('lets the grantee start the break-glass runbook (and no other), whose step invokes the break_glass entry and fails on a refusal', () => {
    const name = Stack.of(sluiceOf).resolve(sluiceOf.breakGlassRunbookName) as string;
    expect(name).toMatch(/^sluice-break-glass-[0-9a-f]{10}$/);
    const documents = template.findResources('AWS::SSM::Document', { Properties: { Name: name } });
    const [content] = Object.values(documents).map(
      (d) =>
        (d.Properties as { Content: { mainSteps: { action: string; inputs: Record<string, unknown> }[] } })
          .Content,
    );
    expect(content!.mainSteps).toEqual([
      expect.objectContaining({
        name: 'override',
        action: 'aws:invokeLambdaFunction',
        isEnd: false,
        inputs: expect.objectContaining({
          FunctionName: refOf(breakGlass),
          Payload: '{"ssmExecution":"{{automation:EXECUTION_ID}}"}',
        }),
      }),
      // The function answers a refused override (audited) rather than failing; the runbook still
      // fails the execution on it, with the answer, and ends at the branch on any other answer.
      {
        name: 'checkOutcome',
        action: 'aws:branch',
        isEnd: true,
        inputs: {
          Choices: [
            { NextStep: 'refused', Variable: '{{override.Payload}}', Contains: '"outcome":"refused"' },
          ],
        },
      },
      {
        name: 'refused',
        action: 'aws:executeScript',
        isEnd: true,
        inputs: {
          Runtime: 'python3.11',
          Handler: 'refuse',
          Script: 'def refuse(events, context):\n    raise Exception(events["answer"])\n',
          InputPayload: { answer: '{{override.Payload}}' },
        },
      },
    ]);
    const statements = statementsOf(template, roleId('Oncall'));
    const start = statements.find((s) => s.Action === 'ssm:StartAutomationExecution');
    expect(JSON.stringify(start?.Resource)).toContain(`automation-definition/${name}:*`);
    // Its automation role may invoke the break_glass entry and nothing else.
    const automation = roleId('SluiceBreakGlassRunbookAutomationRole');
    expect(statementsOf(template, automation)).toEqual([
      expect.objectContaining({ Action: 'lambda:InvokeFunction', Resource: refOf(breakGlass) }),
    ]);
    // The gate function knows the runbook by name.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SLUICE_BREAK_GLASS_RUNBOOK: name }) },
    });
  });

  it('grantGateRequests does not allow it: an approver reaches no break_glass resource', () => {
    const statements = JSON.stringify(statementsOf(template, roleId('Approver')));
    expect(statements).not.toContain(breakGlass);
  });

  it('alarms on any override, to the alarm topic, and sends the Gate Override event there as a message', () => {
    const topic = logicalId(template, 'AWS::SNS::Topic');
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Sluice',
      MetricName: 'BreakGlassOverride',
      Dimensions: [{ Name: 'service', Value: 'sluice-gate' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [refOf(topic)],
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['sluice'], 'detail-type': ['Gate Override'] },
      Targets: [{ Arn: refOf(topic) }],
    });
  });

  it('without a grant there is no break_glass entry and no alarm; without gates it is refused', () => {
    const plain = seedSynth().template;
    expect(
      Object.values(plain.findResources('AWS::Lambda::Alias')).map(
        (a) => (a.Properties as { Name: string }).Name,
      ),
    ).not.toContain('break_glass');
    expect(JSON.stringify(plain.findResources('AWS::CloudWatch::Alarm'))).not.toContain('BreakGlassOverride');
    synth(() => ({}), {
      then: (sluice, stack) => {
        const role = new iam.Role(stack, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() });
        expect(() => sluice.grantBreakGlass(role)).toThrow('grantBreakGlass: this Sluice has no gates');
      },
    });
  });
});
