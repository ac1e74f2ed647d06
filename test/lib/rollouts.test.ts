// Rollouts in the construct: a spec resource per rollout, written before its members (and
// removed after them); the rollouts entry (alias `rollouts`) that grantRolloutControl allows,
// apart from every gate grant.
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { dashboardBody, widgetTitles } from './dashboard-body.ts';
import { ECR_URL, SEED_GATES, logicalId, refOf, seedDelivery, statementsOf, synth } from './synth.ts';

const { template, sluice } = synth(
  (cluster) => ({
    gates: SEED_GATES,
    deliveries: [seedDelivery(cluster), { ...seedDelivery(cluster), name: 'oddy-eu' }],
    rollouts: [
      {
        name: 'app',
        source: { url: ECR_URL, tag: 'v1' },
        waves: [{ deliveries: ['oddy-test'] }, { deliveries: ['*'] }],
      },
    ],
  }),
  {
    then: (sluice, stack) => {
      const root = new iam.AccountRootPrincipal();
      sluice.grantRolloutControl(new iam.Role(stack, 'ReleaseManager', { assumedBy: root }));
      sluice.grantGateRequests(new iam.Role(stack, 'Approver', { assumedBy: root }), 'sre-approval');
    },
  },
);
const roleId = (prefix: string) => logicalId(template, 'AWS::IAM::Role', (_, id) => id.startsWith(prefix));
const entry = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'rollouts');

describe('the rollout spec resource', () => {
  it('writes each rollout, its waves naming their deliveries, before its members and after the gates', () => {
    const resources = template.findResources('Custom::SluiceRollout');
    const [[id, resource]] = Object.entries(resources) as [
      [string, { Properties: Record<string, unknown>; DependsOn?: string[] }],
    ];
    expect(resource.Properties).toMatchObject({ Kind: 'rollout', Name: 'app' });
    expect(JSON.parse(resource.Properties.Spec as string)).toStrictEqual({
      name: 'app',
      source: { url: ECR_URL, tag: 'v1' },
      waves: [{ deliveries: ['oddy-test'] }, { deliveries: ['oddy-eu'] }],
    });
    const gates = Object.keys(template.findResources('Custom::SluiceGate'));
    expect(resource.DependsOn).toEqual(expect.arrayContaining(gates));
    const deliveries = Object.values(template.findResources('Custom::SluiceDelivery')) as {
      DependsOn?: string[];
    }[];
    expect(deliveries).toHaveLength(2);
    for (const delivery of deliveries) expect(delivery.DependsOn).toContain(id);
  });
});

describe('the dashboard', () => {
  const body = dashboardBody(template);
  it("has a row per rollout: its waves, its members' latest runs, members per revision, its halts and resumes", () => {
    expect(widgetTitles(body)).toEqual(
      expect.arrayContaining([
        'Rollout app: members, latest run (RolloutWaiting: its wave or turn has not come; RolloutHalted: halted)',
        'Rollout app: members per revision applied',
        'Rollout app: halts, resumes and rollbacks',
      ]),
    );
    expect(body).toContain('### Rollout app');
    expect(body).toContain('Waves 1: `oddy-test` (1 delivery) → 2: `*` (1 delivery)');
    // The members are found by the rollout their reconcile lines name, however many there are.
    expect(body).toContain('filter rollout = \\"app\\" and ispresent(outcome)');
    expect(body).toContain('stats count(*) as members by applied');
    // Halts and resumes are read from both functions' logs.
    const source = (prefix: string) =>
      `SOURCE '${JSON.stringify(refOf(logicalId(template, 'AWS::Logs::LogGroup', (_, id) => id.startsWith(prefix))))}'`;
    expect(body).toContain(
      `${source('SluiceReconcile')} | ${source('SluiceGate')} | filter (rollout = \\"app\\" and ispresent(action))`,
    );
  });
});

describe('grantRolloutControl', () => {
  it('lets the grantee invoke the rollouts entry URL (and the function only via it) and look it up', () => {
    const byAction = Object.fromEntries(
      statementsOf(template, roleId('ReleaseManager')).map((statement) => [
        statement.Action as string,
        statement,
      ]),
    );
    expect(Object.keys(byAction).sort()).toEqual([
      'lambda:GetFunctionUrlConfig',
      'lambda:InvokeFunction',
      'lambda:InvokeFunctionUrl',
    ]);
    expect(byAction['lambda:InvokeFunctionUrl']).toMatchObject({
      Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      Resource: refOf(entry),
    });
    expect(byAction['lambda:InvokeFunction']).toMatchObject({
      Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } },
      Resource: refOf(entry),
    });
    template.hasResourceProperties('AWS::Lambda::Url', { Qualifier: 'rollouts', AuthType: 'AWS_IAM' });
    expect(sluice.rolloutControlUrl).toBeDefined();
  });

  it('is never allowed by a gate grant', () => {
    const resources = JSON.stringify(statementsOf(template, roleId('Approver')));
    expect(resources).not.toContain(entry);
  });

  it('refuses a Sluice without rollouts', () => {
    const { sluice: without, stack } = synth();
    expect(() =>
      without.grantRolloutControl(
        new iam.Role(stack as Stack, 'Nobody', { assumedBy: new iam.AccountRootPrincipal() }),
      ),
    ).toThrow('grantRolloutControl: this Sluice has no rollouts, so there is nothing to control');
  });
});
