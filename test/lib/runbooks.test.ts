// Approving in the AWS console: a Systems Manager runbook per gate someone may approve, its
// automation role and grants; the gate function's shareable console test events; requireVerified.
import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { parseGate } from '../../functions/core/config/parse.ts';
import { runbookContent } from '../../lib/runbooks.ts';
import {
  ACCOUNT,
  arnOf,
  functionId,
  logicalId,
  REGION,
  refOf,
  seedDelivery,
  statementsOf,
  synth,
} from './synth.ts';

const GATES = [
  { name: 'no-deploy-friday', default: 'open' as const },
  {
    name: 'two-person',
    default: 'closed' as const,
    window: Duration.hours(1),
    approvers: 2,
    requireVerified: true,
  },
];

const { template, sluice } = synth(
  (cluster, stack) => ({
    gates: GATES,
    deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'two-person' }] }],
    approvalTopic: new sns.Topic(stack, 'Approvals'),
  }),
  {
    then: (sluice, stack) => {
      const root = new iam.AccountRootPrincipal();
      sluice.grantGateRequests(new iam.Role(stack, 'Alice', { assumedBy: root }), 'two-person');
      sluice.grantGateRequests(new iam.User(stack, 'Bob'), 'two-person', { actions: ['open'] });
      // A close-only grantee is no approver.
      sluice.grantGateRequests(new iam.Role(stack, 'Oncall', { assumedBy: root }), 'two-person', {
        actions: ['close'],
      });
      sluice.grantRequestApproval(new iam.Role(stack, 'Developer', { assumedBy: root }), 'two-person');
    },
  },
);
const resources = template.toJSON().Resources;
const runbookName = Stack.of(sluice).resolve(sluice.gateRunbookName('two-person')) as string;
const document = logicalId(template, 'AWS::SSM::Document');
const alias = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'runbooks');
const automationRole = logicalId(template, 'AWS::IAM::Role', (p) =>
  String(p.Description).startsWith('sluice: Systems Manager Automation'),
);
const role = (prefix: string) => logicalId(template, 'AWS::IAM::Role', (_, id) => id.startsWith(prefix));
const executions = {
  'Fn::Join': ['', ['arn:', refOf('AWS::Partition'), `:ssm:${REGION}:${ACCOUNT}:automation-execution/*`]],
};

describe('gate runbooks', () => {
  it('names a new document when the approvers change, and the same one for the same approvers', () => {
    const nameWith = (approvers: string[]) => {
      const { sluice: other } = synth(
        (cluster) => ({
          gates: GATES,
          deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'two-person' }] }],
        }),
        {
          then: (built, stack) => {
            for (const name of approvers)
              built.grantGateRequests(new iam.User(stack, name), 'two-person', { actions: ['open'] });
          },
        },
      );
      return Stack.of(other).resolve(other.gateRunbookName('two-person')) as string;
    };
    // An approver removed from the runbook cannot use an execution of the old document: the
    // function knows only the new document's name.
    expect(nameWith(['Alice', 'Bob'])).not.toBe(nameWith(['Alice']));
    expect(nameWith(['Alice', 'Bob'])).toBe(nameWith(['Alice', 'Bob']));
    expect(nameWith(['Bob', 'Alice'])).toBe(nameWith(['Alice', 'Bob']));
  });

  it('one Automation runbook, for the gate someone may approve: approve by its open grantees, then invoke the gate function', () => {
    expect(runbookName).toMatch(/^sluice-two-person-[0-9a-f]{10}$/);
    const { Properties } = resources[document]!;
    expect(Properties).toMatchObject({
      Name: runbookName,
      DocumentType: 'Automation',
      DocumentFormat: 'JSON',
      UpdateMethod: 'NewVersion',
    });
    const content = Properties.Content;
    expect(content).toMatchObject({
      schemaVersion: '0.3',
      assumeRole: arnOf(automationRole),
      parameters: {
        // Checked when the execution starts, before anyone is asked: a tag alone is refused.
        revision: {
          type: 'String',
          default: '',
          allowedPattern: '^$|^(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}@)?sha256:[a-f0-9]{64}$',
        },
        window: { type: 'String', default: '', allowedPattern: '^(\\d+(ms|d|h|m|s))*$' },
        deliveries: { type: 'StringList', default: [], allowedPattern: expect.stringMatching(/^\^/) },
        reason: { type: 'String', default: '' },
      },
    });
    expect(content.mainSteps).toEqual([
      {
        name: 'approve',
        action: 'aws:approve',
        timeoutSeconds: 86400,
        onFailure: 'Abort',
        inputs: {
          NotificationArn: refOf(
            logicalId(template, 'AWS::SNS::Topic', (_, id) => id.startsWith('Approvals')),
          ),
          // The digest and the deliveries first; each field labelled, so a blank one still reads.
          Message:
            "sluice: approve opening gate 'two-person'. Revision (empty: any revision): {{revision}} (the gate opens for the digest after the @; the tag is as the requester wrote it, not checked against the registry). Deliveries (empty: every delivery using the gate): {{deliveries}}. Window (empty: the gate's own): {{window}}. Reason: {{reason}}.",
          MinRequiredApprovals: 2,
          Approvers: [arnOf(role('Alice')), arnOf(logicalId(template, 'AWS::IAM::User'))],
        },
      },
      {
        name: 'openGate',
        action: 'aws:invokeLambdaFunction',
        isEnd: false,
        inputs: {
          FunctionName: refOf(alias),
          InvocationType: 'RequestResponse',
          Payload: '{"ssmExecution":"{{automation:EXECUTION_ID}}"}',
        },
      },
      // The function answers a refused approval (audited) rather than failing; the runbook still
      // fails the execution on it, with the answer, and ends at the branch on any other answer.
      {
        name: 'checkOutcome',
        action: 'aws:branch',
        isEnd: true,
        inputs: {
          Choices: [
            { NextStep: 'refused', Variable: '{{openGate.Payload}}', Contains: '"outcome":"refused"' },
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
          InputPayload: { answer: '{{openGate.Payload}}' },
        },
      },
    ]);
  });

  it('the gate function knows its runbooks by name and may read executions, nothing more of SSM', () => {
    const gate = functionId(template, 'open and close gates');
    expect(JSON.parse(resources[gate]!.Properties.Environment.Variables.SLUICE_GATE_RUNBOOKS)).toEqual({
      'two-person': runbookName,
    });
    const gateRole = role('SluiceGateRole');
    const ssm = statementsOf(template, gateRole).filter((s) => String(s.Action).startsWith('ssm:'));
    expect(ssm).toEqual([{ Action: 'ssm:GetAutomationExecution', Effect: 'Allow', Resource: executions }]);
  });

  it('Automation assumes its role for this account only; it may invoke the runbooks alias and publish approval requests, nothing else', () => {
    expect(resources[automationRole]!.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'ssm.amazonaws.com' },
        Condition: {
          StringEquals: { 'aws:SourceAccount': ACCOUNT },
          ArnLike: { 'aws:SourceArn': executions },
        },
      },
    ]);
    expect(statementsOf(template, automationRole)).toEqual([
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: refOf(alias) },
      {
        Action: 'sns:Publish',
        Effect: 'Allow',
        Resource: refOf(logicalId(template, 'AWS::SNS::Topic', (_, id) => id.startsWith('Approvals'))),
      },
    ]);
  });

  it('a requester may start this runbook and pass its role to SSM; an approver may signal', () => {
    const developer = statementsOf(template, role('Developer'));
    expect(developer).toContainEqual({
      Action: 'ssm:StartAutomationExecution',
      Effect: 'Allow',
      Resource: {
        'Fn::Join': [
          '',
          [
            'arn:',
            refOf('AWS::Partition'),
            `:ssm:${REGION}:${ACCOUNT}:automation-definition/${runbookName}:*`,
          ],
        ],
      },
    });
    expect(developer).toContainEqual({
      Action: 'iam:PassRole',
      Effect: 'Allow',
      Resource: arnOf(automationRole),
      Condition: { StringEquals: { 'iam:PassedToService': 'ssm.amazonaws.com' } },
    });
    expect(developer.some((s) => String(s.Action).includes('SendAutomationSignal'))).toBe(false);
    expect(statementsOf(template, role('Alice'))).toContainEqual({
      Action: [
        'ssm:SendAutomationSignal',
        'ssm:GetAutomationExecution',
        'ssm:DescribeAutomationStepExecutions',
      ],
      Effect: 'Allow',
      Resource: executions,
    });
    expect(statementsOf(template, role('Oncall')).some((s) => String(s.Action).startsWith('ssm:'))).toBe(
      false,
    );
  });

  it('a runbook with no approver fails synthesis, naming the gate', () => {
    expect(() =>
      synth(undefined, {
        then: (sluice, stack) =>
          void sluice.grantRequestApproval(
            new iam.Role(stack, 'Developer', { assumedBy: new iam.AccountRootPrincipal() }),
            'sre-approval',
          ),
      }),
    ).toThrow(/gate 'sre-approval' has a runbook but no approvers/);
  });

  it('requireVerified reaches the gate spec', () => {
    const spec = Object.values(template.findResources('Custom::SluiceGate'))
      .map((r) => (r as { Properties: { Name: string; Spec: string } }).Properties)
      .find((p) => p.Name === 'two-person')!;
    expect(JSON.parse(spec.Spec)).toMatchObject({ requireVerified: true, approvers: 2 });
  });
});

describe("a pinning gate's runbook", () => {
  it('requires a revision with its digest (no default, no blank), and says so', () => {
    const gate = parseGate({ name: 'release', default: 'closed', window: '1h', approval: 'revision' });
    const content = runbookContent({
      gate,
      approvers: ['arn:aws:iam::123456789012:user/alice'],
      functionArn: 'arn:aws:lambda:ap-northeast-1:123456789012:function:gate:runbooks',
      assumeRoleArn: 'arn:aws:iam::123456789012:role/automation',
    }) as {
      parameters: Record<string, Record<string, unknown>>;
      mainSteps: { inputs: { Message?: string } }[];
    };
    expect(content.parameters.revision).toEqual({
      type: 'String',
      description: expect.stringContaining('required'),
      allowedPattern: '^(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}@)?sha256:[a-f0-9]{64}$',
    });
    expect(content.parameters.window!.description).toContain("the gate's window, 1h");
    expect(content.mainSteps[0]!.inputs.Message).toMatch(
      /^sluice: approve opening gate 'release'\. Revision: \{\{revision\}\}/,
    );
  });
});

describe('console test events', () => {
  it('by default none are made: no account-wide registry the first deploy could collide with, no schema', () => {
    // lambda-testevent-schemas exists wherever someone once saved a shareable test event, and a
    // second sluice stack in the account and Region would create it again: CloudFormation cannot.
    template.resourceCountIs('AWS::EventSchemas::Registry', 0);
    template.resourceCountIs('AWS::EventSchemas::Schema', 0);
    const plain = synth((cluster) => ({
      gates: GATES,
      deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'two-person' }] }],
    })).template;
    plain.resourceCountIs('AWS::EventSchemas::Registry', 0);
    plain.resourceCountIs('AWS::EventSchemas::Schema', 0);
  });

  it("'create': the gate function gets shareable test events: status, open and close per gate, in lambda-testevent-schemas", () => {
    const template = synth((cluster) => ({
      gates: GATES,
      deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'two-person' }] }],
      consoleTestEvents: 'create',
    })).template;
    const resources = template.toJSON().Resources;
    const gate = functionId(template, 'open and close gates');
    const schema = resources[logicalId(template, 'AWS::EventSchemas::Schema')]!.Properties;
    expect(schema).toMatchObject({
      RegistryName: 'lambda-testevent-schemas',
      SchemaName: { 'Fn::Join': ['', ['_', refOf(gate), '-schema']] },
      Type: 'OpenApi3',
    });
    const content = JSON.parse(schema.Content);
    expect(Object.keys(content.components.examples).sort()).toEqual([
      'no-deploy-friday-close',
      'no-deploy-friday-open',
      'no-deploy-friday-status',
      'two-person-close',
      'two-person-open',
      'two-person-status',
    ]);
    expect(content.components.examples['two-person-open'].value).toEqual({
      gate: 'two-person',
      action: 'open',
      window: '1h',
      reason: 'CHG-1234',
      requestedBy: 'your-name',
    });
    // The registry is created and kept: other functions' shareable events live in it too.
    const registry = template.toJSON().Resources[logicalId(template, 'AWS::EventSchemas::Registry')];
    expect(registry).toMatchObject({
      Properties: { RegistryName: 'lambda-testevent-schemas' },
      DeletionPolicy: 'Retain',
    });
  });

  it("'existing' uses the registry there, 'none' makes no test events", () => {
    const existing = synth(() => ({ gates: GATES, consoleTestEvents: 'existing' })).template;
    existing.resourceCountIs('AWS::EventSchemas::Registry', 0);
    existing.resourceCountIs('AWS::EventSchemas::Schema', 1);
    const none = synth(() => ({ gates: GATES, consoleTestEvents: 'none' })).template;
    none.resourceCountIs('AWS::EventSchemas::Schema', 0);
  });
});
