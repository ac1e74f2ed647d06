// The construct's options, each on its own small stack (bundling skipped: templates only).
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import type { SluiceDelivery } from '../../lib/index.ts';
import {
  ACCOUNT,
  arnOf,
  ECR_URL,
  functionId,
  logicalId,
  REPOSITORY_ARN,
  SEED_GATES,
  seedDelivery,
  statementsOf,
  synth,
} from './synth.ts';

// CloudFormation's own template checks run on the seed (sluice.test.ts) and on every option at
// once (nag.test.ts); here they would only add their start-up time to each file.
process.env.CDK_VALIDATION = 'false';

const NAMED = { eks: { name: 'staging', region: 'eu-west-1' } };
const ROLE = 'arn:aws:iam::210987654321:role/sluice-deployer';

function delivery(fields: Partial<SluiceDelivery>): SluiceDelivery {
  return { name: 'app', source: { url: ECR_URL }, cluster: NAMED, ...fields };
}

const deployerStatements = (template: ReturnType<typeof synth>['template']) =>
  statementsOf(
    template,
    logicalId(template, 'AWS::IAM::Role', (p) => String(p.Description).startsWith('sluice: reconciles')),
  );

describe('clusters by name', () => {
  it('DescribeCluster on the named cluster, no access entry; a roleArn is assumed instead', () => {
    const { template } = synth(() => ({
      deliveries: [
        delivery({ name: 'direct' }),
        delivery({
          name: 'cross-account',
          cluster: { eks: { ...NAMED.eks, name: 'shared', roleArn: ROLE } },
        }),
      ],
    }));
    template.resourceCountIs('AWS::EKS::AccessEntry', 0);
    const statements = deployerStatements(template);
    expect(statements).toContainEqual({
      Action: 'eks:DescribeCluster',
      Effect: 'Allow',
      Resource: {
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:eks:eu-west-1:${ACCOUNT}:cluster/staging`]],
      },
    });
    expect(statements).toContainEqual({ Action: 'sts:AssumeRole', Effect: 'Allow', Resource: ROLE });
    expect(JSON.stringify(statements)).not.toContain('cluster/shared');
  });

  it('a narrower access policy for imported clusters, one entry per cluster', () => {
    const { template } = synth((cluster, stack) => {
      const other = eks.Cluster.fromClusterAttributes(stack, 'Other', { clusterName: 'batch' });
      return {
        gates: SEED_GATES,
        deliveries: [
          seedDelivery(cluster),
          delivery({ name: 'second', cluster }),
          delivery({ name: 'third', cluster: other }),
        ],
        clusterAccessPolicies: [
          eks.AccessPolicy.fromAccessPolicyName('AmazonEKSEditPolicy', {
            accessScopeType: eks.AccessScopeType.NAMESPACE,
            namespaces: ['apps'],
          }),
        ],
      };
    });
    template.resourceCountIs('AWS::EKS::AccessEntry', 2);
    for (const clusterName of ['prod', 'batch']) {
      template.hasResourceProperties('AWS::EKS::AccessEntry', {
        ClusterName: clusterName,
        AccessPolicies: [
          {
            AccessScope: { Type: 'namespace', Namespaces: ['apps'] },
            PolicyArn: Match.objectLike({
              'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('AmazonEKSEditPolicy')])],
            }),
          },
        ],
      });
    }
  });
});

describe('sources', () => {
  it('one rule and one ARN per ECR repository; none for other registries', () => {
    const other = `oci://${ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/team/tools`;
    const { template } = synth(() => ({
      deliveries: [
        delivery({ name: 'a' }),
        delivery({ name: 'b', source: { url: ECR_URL, semver: '^1' } }),
        delivery({ name: 'c', source: { url: other } }),
        delivery({ name: 'public', source: { url: 'oci://ghcr.io/org/manifests' } }),
      ],
    }));
    template.resourceCountIs('AWS::Events::Rule', 2);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({
        region: ['us-east-1'],
        detail: Match.objectLike({ 'repository-name': ['team/tools'] }),
      }),
    });
    expect(deployerStatements(template)).toContainEqual(
      expect.objectContaining({
        Action: expect.arrayContaining(['ecr:BatchGetImage']),
        Resource: [REPOSITORY_ARN, `arn:aws:ecr:us-east-1:${ACCOUNT}:repository/team/tools`],
      }),
    );
  });

  it('no ECR permission at all without an ECR source', () => {
    const { template } = synth(() => ({
      deliveries: [delivery({ source: { url: 'oci://ghcr.io/org/manifests' } })],
    }));
    template.resourceCountIs('AWS::Events::Rule', 0);
    expect(JSON.stringify(deployerStatements(template))).not.toContain('ecr:');
  });
});

describe('options', () => {
  it('VPC placement for the functions that reach clusters (reconcile, spec), not the gate function', () => {
    const { template } = synth((cluster, stack) => {
      const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
      const securityGroup = new ec2.SecurityGroup(stack, 'Egress', { vpc });
      return {
        gates: SEED_GATES,
        deliveries: [seedDelivery(cluster)],
        vpc,
        vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        securityGroups: [securityGroup],
      };
    });
    const securityGroup = logicalId(template, 'AWS::EC2::SecurityGroup', (p) =>
      String(p.GroupDescription).includes('Egress'),
    );
    for (const prefix of ['reconcile deliveries', 'write delivery and gate specs']) {
      const config = template.toJSON().Resources[functionId(template, prefix)].Properties.VpcConfig;
      expect(config.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [securityGroup, 'GroupId'] }]);
      expect(config.SubnetIds).toHaveLength(2);
    }
    expect(
      template.toJSON().Resources[functionId(template, 'open and close gates')].Properties.VpcConfig,
    ).toBeUndefined();
    template.hasResourceProperties('AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('^sluice: reconciles'),
      ManagedPolicyArns: [
        {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole',
            ],
          ],
        },
      ],
    });
  });

  it('a customer managed key, a removal policy, function size and alarm threshold', () => {
    const { template } = synth((cluster, stack) => ({
      gates: SEED_GATES,
      deliveries: [seedDelivery(cluster)],
      encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }),
      removalPolicy: RemovalPolicy.DESTROY,
      reconcileMemorySize: 3008,
      reconcileTimeout: Duration.minutes(10),
      blockedAlarmThreshold: Duration.hours(2),
    }));
    const key = logicalId(template, 'AWS::KMS::Key');
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({
        SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
        Replicas: [Match.objectLike({ SSESpecification: { KMSMasterKeyId: arnOf(key) } })],
      }),
    });
    expect(deployerStatements(template)).toContainEqual(
      expect.objectContaining({ Action: expect.arrayContaining(['kms:Decrypt']), Resource: arnOf(key) }),
    );
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^sluice: reconcile'),
      MemorySize: 3008,
      Timeout: 600,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'BlockedSeconds',
      Threshold: 7200,
    });
  });

  it('no event bus: no SLUICE_EVENT_BUS and no PutEvents; no topic: alarms without actions', () => {
    const { template } = synth((cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)] }));
    expect(JSON.stringify(template.toJSON())).not.toMatch(/SLUICE_EVENT_BUS|events:PutEvents|AlarmActions/);
  });

  it('a suspended delivery keeps its interval schedule, disabled', () => {
    const { template } = synth(() => ({
      deliveries: [delivery({ suspend: true, interval: Duration.hours(1) })],
    }));
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'DISABLED',
    });
  });

  it('a gate schedule window overrides the gate window; no window, no "window" field', () => {
    const { template } = synth(() => ({
      gates: [
        {
          name: 'maintenance',
          default: 'closed',
          window: Duration.hours(1),
          schedules: [
            { cron: '0 2 ? * SUN *', timeZone: 'UTC', action: 'open', window: Duration.hours(3) },
            { cron: '0 6 ? * SUN *', action: 'close' },
          ],
        },
        { name: 'manual', default: 'open', schedules: [{ cron: '0 9 * * ? *', action: 'close' }] },
      ],
    }));
    const inputs = Object.values(template.findResources('AWS::Scheduler::Schedule')).map(
      (s) => JSON.parse(s.Properties.Target.Input as string) as Record<string, string>,
    );
    expect(
      inputs.map(({ gate, action, window, requestedBy }) => ({ gate, action, window, requestedBy })),
    ).toEqual([
      { gate: 'maintenance', action: 'open', window: '3h', requestedBy: 'schedule/maintenance/0' },
      { gate: 'maintenance', action: 'close', window: '1h', requestedBy: 'schedule/maintenance/1' },
      { gate: 'manual', action: 'close', window: undefined, requestedBy: 'schedule/manual/0' },
    ]);
    expect(inputs[2]!.reason).toBe('schedule "0 9 * * ? *" (UTC)');
  });

  it('an environment-agnostic stack: the imported cluster region resolves at deploy time', () => {
    const { template } = synth((cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)] }), {
      stackProps: {},
    });
    const spec = Object.values(template.findResources('Custom::SluiceDelivery'))[0]!.Properties.Spec;
    expect(JSON.stringify(spec)).toContain('{"Ref":"AWS::Region"}');
  });
});
