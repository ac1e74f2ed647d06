// Synth-time checks and options of issue 29: function URL Regions, the cluster-admin warning only
// where sluice makes the access entry, log encryption, the reconcile function's reserved
// concurrency (bundling skipped: templates only).
import type { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { REGIONS_WITHOUT_FUNCTION_URLS, type SluiceDelivery } from '../../lib/index.ts';
import {
  ACCOUNT,
  ECR_URL,
  functionId,
  SEED_GATES,
  seedDelivery,
  synth,
  withoutCloudFormationChecks,
} from './synth.ts';

withoutCloudFormationChecks();

/** The synth-time warnings on the stack's constructs (what `cdk synth` prints as [Warning]). */
function warningsOf(stack: Stack): string[] {
  return stack.node
    .findAll()
    .flatMap((construct) => construct.node.metadata)
    .filter((entry) => entry.type === 'aws:cdk:warning')
    .map((entry) => String(entry.data));
}

const unsigned = (cluster: SluiceDelivery['cluster']): SluiceDelivery => ({
  name: 'app',
  source: { url: ECR_URL },
  cluster,
});

describe('function URLs: the gates need them', () => {
  it('lists the Regions AWS names', () => {
    expect(REGIONS_WITHOUT_FUNCTION_URLS).toEqual(
      expect.arrayContaining(['eu-central-2', 'ap-southeast-4', 'il-central-1', 'me-central-1', 'ca-west-1']),
    );
    expect(REGIONS_WITHOUT_FUNCTION_URLS).not.toContain('eu-central-1');
  });

  it('gates in a Region without function URLs fail synth, naming the gates and the Region', () => {
    expect(() =>
      synth((cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)] }), {
        stackProps: { env: { account: ACCOUNT, region: 'eu-central-2' } },
      }),
    ).toThrow(
      /gates no-deploy-friday, sre-approval need Lambda function URLs .* which AWS does not offer in eu-central-2/,
    );
  });

  it('without gates the same Region synthesizes (no URL is made)', () => {
    const { template } = synth((cluster) => ({ deliveries: [{ ...seedDelivery(cluster), gates: [] }] }), {
      stackProps: { env: { account: ACCOUNT, region: 'eu-central-2' } },
    });
    template.resourceCountIs('AWS::Lambda::Url', 0);
  });

  it('an environment-agnostic stack is not refused: its Region is known at deploy only', () => {
    const { template } = synth((cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)] }), {
      stackProps: {},
    });
    template.resourceCountIs('AWS::Lambda::Url', 4);
  });
});

describe('the cluster-admin warning', () => {
  it('is given for a cluster sluice makes the access entry for (an eks.ICluster)', () => {
    const { stack } = synth((cluster) => ({ deliveries: [unsigned(cluster)] }));
    expect(warningsOf(stack).join('\n')).toMatch(/deliveries app are applied with cluster-admin access/);
  });

  it.for([
    { what: 'by name', cluster: { eks: { name: 'staging', region: 'eu-west-1' } } },
    {
      what: 'by roleArn',
      cluster: {
        eks: {
          name: 'staging',
          region: 'eu-west-1',
          roleArn: 'arn:aws:iam::210987654321:role/sluice-deployer',
        },
      },
    },
  ])('is not given for a cluster given $what: its access is granted outside sluice', ({ cluster }) => {
    const { stack } = synth(() => ({ deliveries: [unsigned(cluster)] }));
    expect(warningsOf(stack).join('\n')).not.toMatch(/cluster-admin/);
  });
});

describe('logEncryptionKey', () => {
  it('encrypts every log group sluice creates, and lets CloudWatch Logs use a key made in the app', () => {
    let keyId = '';
    const { template } = synth((cluster, stack) => {
      const key = new kms.Key(stack, 'LogKey', { enableKeyRotation: true });
      keyId = stack.getLogicalId(key.node.defaultChild as kms.CfnKey);
      return { gates: SEED_GATES, deliveries: [seedDelivery(cluster)], logEncryptionKey: key };
    });
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    // The reconcile, gate and spec functions' and the spec provider's.
    expect(groups).toHaveLength(4);
    for (const group of groups) expect(group.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'logs.ap-northeast-1.amazonaws.com' },
            Action: Match.arrayWith(['kms:Decrypt*', 'kms:GenerateDataKey*']),
            Condition: {
              ArnLike: {
                'kms:EncryptionContext:aws:logs:arn': Match.objectLike({
                  'Fn::Join': Match.arrayWith([
                    Match.arrayWith([':logs:ap-northeast-1:123456789012:log-group:*']),
                  ]),
                }),
              },
            },
          }),
        ]),
      },
    });
  });

  it('leaves log groups without KmsKeyId by default', () => {
    const { template } = synth();
    for (const group of Object.values(template.findResources('AWS::Logs::LogGroup')))
      expect(group.Properties.KmsKeyId).toBeUndefined();
  });
});

describe('reconcileReservedConcurrency', () => {
  it('reserves concurrency for the reconcile function only', () => {
    const { template } = synth((cluster) => ({
      deliveries: [seedDelivery(cluster)],
      gates: SEED_GATES,
      reconcileReservedConcurrency: 20,
    }));
    const functions = template.findResources('AWS::Lambda::Function');
    const reconcile = functionId(template, 'reconcile deliveries');
    expect(functions[reconcile]!.Properties.ReservedConcurrentExecutions).toBe(20);
    const others = Object.entries(functions).filter(([id]) => id !== reconcile);
    for (const [, fn] of others) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it.for([0, -1, 2.5])('%s is refused, naming the prop', (value) => {
    expect(() =>
      synth((cluster) => ({ deliveries: [seedDelivery(cluster)], reconcileReservedConcurrency: value })),
    ).toThrow(new RegExp(`Sluice props: reconcileReservedConcurrency: ${value} is not a positive integer`));
  });
});
