// The example app (bin/app.ts) synthesizes offline, without AWS credentials or AWS_* variables,
// with cdk-nag's AwsSolutions checks on; context values select the target.
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { synthExampleApp } from './synth.ts';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
interface Synthesized {
  readonly resources: Resources;
  /** The stack artifact's properties in the cloud assembly's manifest. */
  readonly stack: { terminationProtection?: boolean };
}

async function synthApp(
  context: Record<string, string>,
  cliEnv: Record<string, string> = {},
): Promise<Synthesized> {
  const { templatePath, cleanup } = await synthExampleApp(context, undefined, cliEnv);
  try {
    const manifest = JSON.parse(readFileSync(join(dirname(templatePath), 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { properties?: { templateFile?: string; terminationProtection?: boolean } }>;
    };
    const artifact = Object.values(manifest.artifacts).find(
      (a) => a.properties?.templateFile === basename(templatePath),
    );
    return {
      resources: (JSON.parse(readFileSync(templatePath, 'utf8')) as { Resources: Resources }).Resources,
      stack: artifact?.properties ?? {},
    };
  } finally {
    cleanup();
  }
}

const ofType = (resources: Resources, type: string) =>
  Object.values(resources).filter((resource) => resource.Type === type);

// The apps at once: each is a node process of its own.
const [defaults, underCli, staging] = await Promise.all([
  synthApp({}),
  // What `npx cdk synth` sets without credentials: its default region, no account.
  synthApp({}, { CDK_DEFAULT_REGION: 'us-east-1' }),
  synthApp({
    stackName: 'SluiceStaging',
    account: '210987654321',
    region: 'eu-west-1',
    clusterName: 'staging',
    clusterRoleArn: 'arn:aws:iam::210987654321:role/sluice-deployer',
    repository: 'oci://210987654321.dkr.ecr.eu-west-1.amazonaws.com/team/oddy',
    tag: 'v2',
    deployerRoleName: 'sluice-deployer-staging',
    alarmTopicArn: 'arn:aws:sns:eu-west-1:210987654321:oncall',
  }),
]);

describe('bin/app.ts', () => {
  it('synthesizes the seed scenario with placeholders when no context is given', () => {
    const { resources } = defaults;
    expect(ofType(resources, 'Custom::SluiceDelivery').map((r) => r.Properties.Name)).toEqual(['oddy-test']);
    expect(ofType(resources, 'Custom::SluiceGate').map((r) => r.Properties.Name)).toEqual([
      'no-deploy-friday',
      'sre-approval',
    ]);
    expect(ofType(resources, 'AWS::EKS::AccessEntry').map((r) => r.Properties.ClusterName)).toEqual(['prod']);
    const spec = JSON.parse(ofType(resources, 'Custom::SluiceDelivery')[0]!.Properties.Spec as string);
    expect(spec.source).toEqual({
      url: 'oci://123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/oddy-test',
      tag: 'v1',
    });
  });

  it("keeps the placeholder region under the CDK CLI without credentials (its us-east-1 is a default, not the user's)", () => {
    const spec = JSON.parse(
      ofType(underCli.resources, 'Custom::SluiceDelivery')[0]!.Properties.Spec as string,
    );
    expect(spec.source.url).toBe('oci://123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/oddy-test');
    expect(spec.cluster).toEqual({ eks: { name: 'prod', region: 'ap-northeast-1' } });
  });

  it('takes the account, region, cluster, role, repository, role name and alarm topic from context', () => {
    const { resources } = staging;
    expect(ofType(resources, 'AWS::EKS::AccessEntry')).toEqual([]);
    const spec = JSON.parse(ofType(resources, 'Custom::SluiceDelivery')[0]!.Properties.Spec as string);
    expect(spec.cluster).toEqual({
      eks: {
        name: 'staging',
        region: 'eu-west-1',
        roleArn: 'arn:aws:iam::210987654321:role/sluice-deployer',
      },
    });
    expect(spec.source.tag).toBe('v2');
    expect(ofType(resources, 'AWS::Events::Rule')[0]!.Properties.EventPattern).toMatchObject({
      account: ['210987654321'],
      region: ['eu-west-1'],
      detail: { 'repository-name': ['team/oddy'] },
    });
    expect(ofType(resources, 'AWS::IAM::Role').map((r) => r.Properties.RoleName)).toContain(
      'sluice-deployer-staging',
    );
    const alarms = ofType(resources, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms)
      expect(alarm.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:210987654321:oncall']);
  });

  it('the stack has termination protection, the table deletion protection', () => {
    for (const app of [defaults, staging]) {
      expect(app.stack.terminationProtection).toBe(true);
      expect(ofType(app.resources, 'AWS::DynamoDB::GlobalTable')[0]!.Properties.Replicas).toEqual([
        expect.objectContaining({ DeletionProtectionEnabled: true }),
      ]);
    }
  });
});
