// The example app (bin/app.ts) synthesizes offline, without AWS credentials or AWS_* variables,
// with cdk-nag's AwsSolutions checks on; context values select the target.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundling.ts';

/** Runs the app as the CDK CLI does (CDK_OUTDIR, CDK_CONTEXT_JSON), bundling skipped; returns the template. */
type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

async function synthApp(context: Record<string, string>): Promise<Resources> {
  const outdir = mkdtempSync(join(tmpdir(), 'sluice-app-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(AWS_|CDK_)/.test(key)));
  await promisify(execFile)(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'bin', 'app.ts')], {
    cwd: PROJECT_ROOT,
    env: {
      ...env,
      CDK_OUTDIR: outdir,
      // CloudFormation's own template checks run in the construct tests; here only cdk-nag.
      CDK_VALIDATION: 'false',
      CDK_CONTEXT_JSON: JSON.stringify({ ...context, 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const stackName = context.stackName ?? 'Sluice';
  try {
    const template = readFileSync(join(outdir, `${stackName}.template.json`), 'utf8');
    return (JSON.parse(template) as { Resources: Resources }).Resources;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const ofType = (resources: Resources, type: string) =>
  Object.values(resources).filter((resource) => resource.Type === type);

// Both apps at once: each is a node process of its own.
const [defaults, staging] = await Promise.all([
  synthApp({}),
  synthApp({
    stackName: 'SluiceStaging',
    account: '210987654321',
    region: 'eu-west-1',
    clusterName: 'staging',
    clusterRoleArn: 'arn:aws:iam::210987654321:role/sluice-deployer',
    repository: 'oci://210987654321.dkr.ecr.eu-west-1.amazonaws.com/team/oddy',
    tag: 'v2',
  }),
]);

describe('bin/app.ts', () => {
  it('synthesizes the seed scenario with placeholders when no context is given', () => {
    const resources = defaults;
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

  it('takes the account, region, cluster, role and repository from context', () => {
    const resources = staging;
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
  });
});
