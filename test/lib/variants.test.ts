// The construct's options, each on its own small stack (bundling skipped: templates only).
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SluiceDelivery } from '../../lib/index.ts';
import {
  ACCOUNT,
  REGION,
  arnOf,
  ECR_URL,
  functionId,
  logicalId,
  REPOSITORY_ARN,
  SEED_GATES,
  seedDelivery,
  statementsOf,
  synth,
  withoutCloudFormationChecks,
} from './synth.ts';

// CloudFormation's own template checks run on the seed (sluice.test.ts) and on every option at
// once (nag.test.ts); here they would only add their start-up time to each file.
withoutCloudFormationChecks();

const NAMED = { eks: { name: 'staging', region: 'eu-west-1' } };
const ROLE = 'arn:aws:iam::210987654321:role/sluice-deployer';

function delivery(fields: Partial<SluiceDelivery>): SluiceDelivery {
  return { name: 'app', source: { url: ECR_URL }, cluster: NAMED, ...fields };
}

/** The synth-time warnings on the stack's constructs (what `cdk synth` prints as [Warning]). */
function warningsOf(stack: Stack): string[] {
  return stack.node
    .findAll()
    .flatMap((construct) => construct.node.metadata)
    .filter((entry) => entry.type === 'aws:cdk:warning')
    .map((entry) => String(entry.data));
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

describe('SOPS decryption', () => {
  const key = (id: string) => `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`;
  const SECRET = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:sluice/age-AbCdEf`;

  it('kms:Decrypt on exactly the named keys and GetSecretValue on exactly the age secret; none without decryption', () => {
    const { template } = synth(() => ({
      deliveries: [
        delivery({ name: 'a', decryption: { provider: 'sops', kmsKeyArns: [key('one'), key('two')] } }),
        delivery({
          name: 'b',
          decryption: { provider: 'sops', kmsKeyArns: [key('one')], ageKeySecretArn: SECRET },
        }),
        delivery({ name: 'c' }),
      ],
    }));
    const statements = deployerStatements(template);
    expect(statements.filter((s) => String(s.Action).startsWith('kms:'))).toEqual([
      { Action: 'kms:Decrypt', Effect: 'Allow', Resource: [key('one'), key('two')] },
    ]);
    expect(statements.filter((s) => String(s.Action).startsWith('secretsmanager:'))).toEqual([
      { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: SECRET },
    ]);

    const { template: plain } = synth(() => ({ deliveries: [delivery({ name: 'c' })] }));
    expect(JSON.stringify(deployerStatements(plain))).not.toMatch(/kms:Decrypt|secretsmanager:/);
  });
});

describe('sources', () => {
  it('one ARN per ECR repository; a push rule only where its events arrive (this account and region); none for other registries', () => {
    const otherRegion = `oci://${ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/team/tools`;
    const otherAccount = `oci://210987654321.dkr.ecr.${REGION}.amazonaws.com/shared/base`;
    const deliveries = [
      delivery({ name: 'a' }),
      delivery({ name: 'b', source: { url: ECR_URL, semver: '^1' } }),
      delivery({ name: 'c', source: { url: otherRegion } }),
      delivery({ name: 'd', source: { url: otherAccount } }),
      delivery({ name: 'public', source: { url: 'oci://ghcr.io/org/manifests' } }),
    ];
    const { template, stack } = synth(() => ({ deliveries }));
    template.resourceCountIs('AWS::Events::Rule', 1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({
        account: [ACCOUNT],
        region: [REGION],
        detail: Match.objectLike({ 'repository-name': ['oddy-test'] }),
      }),
    });
    expect(deployerStatements(template)).toContainEqual(
      expect.objectContaining({
        Action: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer', 'ecr:ListImages'],
        Resource: [
          REPOSITORY_ARN,
          `arn:aws:ecr:${REGION}:210987654321:repository/shared/base`,
          `arn:aws:ecr:us-east-1:${ACCOUNT}:repository/team/tools`,
        ],
      }),
    );
    // The rule that could never match is not made, and the synth says why.
    expect(warningsOf(stack).join('\n')).toMatch(
      /shared\/base \(210987654321, ap-northeast-1\), team\/tools \(123456789012, us-east-1\) are in another account or region.*forwardedPushEvents: true/,
    );

    // Forwarded from the other accounts and regions: a rule for each.
    const forwarded = synth(() => ({ deliveries, forwardedPushEvents: true }));
    forwarded.template.resourceCountIs('AWS::Events::Rule', 3);
    expect(warningsOf(forwarded.stack).join('\n')).not.toMatch(/another account or region/);
  });

  it('no ECR permission at all without an ECR source', () => {
    const { template } = synth(() => ({
      deliveries: [delivery({ source: { url: 'oci://ghcr.io/org/manifests' } })],
    }));
    template.resourceCountIs('AWS::Events::Rule', 0);
    expect(JSON.stringify(deployerStatements(template))).not.toContain('ecr:');
  });
});

describe('preventSelfApproval', () => {
  it("a rule sends CloudTrail's PutImage records to the gate function, and the synth warns that it needs a trail", () => {
    const gates = [
      {
        name: 'four-eyes',
        default: 'closed' as const,
        approval: 'revision' as const,
        approvers: 2,
        preventSelfApproval: true,
      },
    ];
    const { template, stack } = synth(() => ({ gates, deliveries: [delivery({ name: 'a' })] }));
    const gate = functionId(template, 'open and close gates');
    // The only entry through which the gate function takes push records.
    const entry = logicalId(template, 'AWS::Lambda::Alias', (p) => p.Name === 'record_pushes');
    template.hasResourceProperties('AWS::Lambda::Alias', {
      Name: 'record_pushes',
      FunctionName: { Ref: gate },
    });
    // A record the function fails on goes to the failure queue, as the function's own invocations do.
    const entryConfig = logicalId(template, 'AWS::Lambda::EventInvokeConfig', (p) =>
      JSON.stringify(p.Qualifier).includes(entry),
    );
    expect(template.toJSON().Resources[entryConfig].Properties).toMatchObject({
      FunctionName: { Ref: gate },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: expect.anything() } },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ecr'],
        'detail-type': ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['ecr.amazonaws.com'],
          eventName: ['PutImage'],
          errorCode: [{ exists: false }],
        },
      },
      Targets: [Match.objectLike({ Arn: { Ref: entry } })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { Ref: entry },
      Principal: 'events.amazonaws.com',
    });
    expect(warningsOf(stack).join('\n')).toMatch(
      /gates four-eyes have preventSelfApproval: .*only when a CloudTrail trail logs management events.*\[ack: sluice:self-approval-needs-trail\]/,
    );

    const without = synth(() => ({ gates: [{ ...gates[0]!, preventSelfApproval: false }], deliveries: [] }));
    expect(JSON.stringify(without.template.findResources('AWS::Events::Rule'))).not.toContain('PutImage');
    expect(warningsOf(without.stack).join('\n')).not.toMatch(/preventSelfApproval/);
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
    // The network-interface actions, not the managed policy (whose log writes reach every log group).
    template.hasResourceProperties('AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('^sluice: reconciles'),
      ManagedPolicyArns: Match.absent(),
    });
    expect(deployerStatements(template)).toContainEqual({
      Action: [
        'ec2:CreateNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DescribeSubnets',
        'ec2:DeleteNetworkInterface',
        'ec2:AssignPrivateIpAddresses',
        'ec2:UnassignPrivateIpAddresses',
      ],
      Effect: 'Allow',
      Resource: '*',
    });
    expect(JSON.stringify(deployerStatements(template))).not.toMatch(
      /logs:[A-Za-z]+","Effect":"Allow","Resource":"\*"/,
    );
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
      MetricName: 'UnplannedBlockedSeconds',
      Threshold: 7200,
    });
  });

  it('no event bus: no SLUICE_EVENT_BUS and no PutEvents; no topic: alarms without actions', () => {
    const { template } = synth((cluster) => ({ gates: SEED_GATES, deliveries: [seedDelivery(cluster)] }));
    expect(JSON.stringify(template.toJSON())).not.toMatch(/SLUICE_EVENT_BUS|events:PutEvents|AlarmActions/);
  });

  it('a suspended delivery keeps its interval schedule, disabled, and has no staleness alarm', () => {
    const { template } = synth(() => ({
      deliveries: [delivery({ suspend: true, interval: Duration.hours(1) })],
    }));
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'DISABLED',
    });
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain(
      'ReconcileCompleted',
    );
  });

  it.each([
    [Duration.minutes(1), 60, 3],
    [Duration.hours(1), 3600, 3],
    // Periods of an hour or more may look back 7 days: three intervals, each a period.
    [Duration.hours(12), 12 * 3600, 3],
    [Duration.hours(24), 24 * 3600, 3],
  ])(
    'a delivery every %s is stale after %i s × %i periods without a completed reconcile',
    (interval, period, periods) => {
      const { template } = synth(() => ({ deliveries: [delivery({ interval })] }));
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ReconcileCompleted',
        Period: period,
        EvaluationPeriods: periods,
        TreatMissingData: 'breaching',
      });
    },
  );

  it.each([
    [Duration.minutes(1), 1],
    [Duration.minutes(5), 5],
    [Duration.hours(1), 60],
    // Two runs (an interval and the window apart) must fall within the staleness alarm's three intervals.
    [Duration.hours(12), 720],
  ])(
    'a delivery every %s runs within a flexible window of %i minutes after each firing',
    (interval, minutes) => {
      const { template } = synth(() => ({ deliveries: [delivery({ interval })] }));
      template.hasResourceProperties('AWS::Scheduler::Schedule', {
        Target: Match.objectLike({ Input: Match.stringLikeRegexp('"delivery"') }),
        FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: minutes },
      });
    },
  );

  it('a daily delivery is spread over a day, the longest flexible window Scheduler takes', () => {
    const { template } = synth(() => ({ deliveries: [delivery({ interval: Duration.hours(24) })] }));
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({ Input: Match.stringLikeRegexp('"delivery"') }),
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 1440 },
    });
  });

  it("monitoring: 'fleet': four alarms for all deliveries instead of four each, on metrics without the delivery dimension", () => {
    const deliveries = [delivery({ name: 'a' }), delivery({ name: 'b', interval: Duration.minutes(1) })];
    const { template, sluice } = synth(() => ({ deliveries, monitoring: 'fleet' }));
    const sluiceAlarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'))
      .map(
        (a) =>
          a.Properties as {
            Namespace?: string;
            MetricName: string;
            Dimensions: { Name: string }[];
            Period: number;
            EvaluationPeriods: number;
          },
      )
      .filter((p) => p.Namespace === 'Sluice');
    expect(sluiceAlarms.map((p) => p.MetricName).sort()).toEqual([
      'KeptObjects',
      'ReconcileCompleted',
      'ReconcileFailed',
      'UnplannedBlockedSeconds',
    ]);
    for (const alarm of sluiceAlarms)
      expect(alarm.Dimensions).toEqual([{ Name: 'service', Value: 'sluice-reconcile' }]);
    // Staleness after three of the shortest interval.
    expect(sluiceAlarms.find((p) => p.MetricName === 'ReconcileCompleted')).toMatchObject({
      Period: 60,
      EvaluationPeriods: 3,
    });
    expect(sluice.alarms.size).toBe(0);
    expect(sluice.fleetAlarms).toHaveLength(4);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^sluice: reconcile'),
      Environment: { Variables: Match.objectLike({ SLUICE_METRICS_SCOPE: 'fleet' }) },
    });
  });

  it('per-delivery monitoring (the default): four alarms per delivery, metrics per delivery', () => {
    const { template, sluice } = synth(() => ({
      deliveries: [delivery({ name: 'a' }), delivery({ name: 'b' })],
    }));
    const perDelivery = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((a) =>
      (a.Properties.Dimensions as { Name: string }[] | undefined)?.some((d) => d.Name === 'delivery'),
    );
    expect(perDelivery).toHaveLength(8);
    expect(sluice.fleetAlarms).toEqual([]);
    expect(JSON.stringify(template.toJSON())).not.toContain('SLUICE_METRICS_SCOPE');
  });

  it('spreadIntervals: false fires every interval schedule at its exact time', () => {
    const { template } = synth(() => ({ deliveries: [delivery({})], spreadIntervals: false }));
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({ Input: Match.stringLikeRegexp('"delivery"') }),
      FlexibleTimeWindow: { Mode: 'OFF' },
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
    // The gates' cron schedules (the dashboard's gate-state reads aside: test/lib/dashboard.test.ts).
    const inputs = Object.values(template.findResources('AWS::Scheduler::Schedule'))
      .map((s) => JSON.parse(s.Properties.Target.Input as string) as Record<string, string>)
      .filter((input) => input.action !== 'status');
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

describe('the control plane is hard to lose', () => {
  it('the same cluster imported twice (by name and region) gets one access entry; another region, its own', () => {
    const { template } = synth((cluster, stack) => {
      const again = eks.Cluster.fromClusterAttributes(stack, 'Again', { clusterName: 'prod' });
      const elsewhere = eks.Cluster.fromClusterAttributes(stack, 'Elsewhere', { clusterName: 'prod' });
      // An imported cluster takes its stack's region; one in another region is imported from a stack there.
      Object.defineProperty(elsewhere, 'env', { value: { account: ACCOUNT, region: 'us-east-1' } });
      return {
        deliveries: [
          delivery({ name: 'one', cluster }),
          delivery({ name: 'two', cluster: again }),
          delivery({ name: 'three', cluster: elsewhere }),
        ],
      };
    });
    template.resourceCountIs('AWS::EKS::AccessEntry', 2);
  });

  it('table deletion protection is on by default and can be turned off', () => {
    const protectedTable = synth(() => ({ deliveries: [delivery({})] }));
    protectedTable.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [Match.objectLike({ DeletionProtectionEnabled: true })],
    });
    const unprotected = synth(() => ({ deliveries: [delivery({})], tableDeletionProtection: false }));
    unprotected.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [Match.objectLike({ DeletionProtectionEnabled: false })],
    });
  });

  it('deployerRoleName names the role that trust policies elsewhere name', () => {
    const { template } = synth(() => ({ deliveries: [delivery({})], deployerRoleName: 'sluice-deployer' }));
    template.hasResourceProperties('AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('^sluice: reconciles'),
      RoleName: 'sluice-deployer',
    });
  });
});

describe('synth-time warnings for risky choices', () => {
  const KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();

  it('cluster admin from an unsigned source, Delete without a gate, no alarm topic: each named', () => {
    const { stack } = synth((cluster) => ({
      deliveries: [delivery({ name: 'risky', cluster, prune: true })],
    }));
    const warnings = warningsOf(stack).join('\n');
    expect(warnings).toMatch(
      /deliveries risky are applied with cluster-admin access .* from sources without verify/,
    );
    expect(warnings).toMatch(/deliveries risky have deletionPolicy Delete and no gate/);
    expect(warnings).toMatch(/no alarmTopic: .* notify no one/);
  });

  it('none when the source is verified, the delivery gated and alarms go to a topic', () => {
    const { stack } = synth((cluster, stack) => ({
      gates: SEED_GATES,
      deliveries: [
        {
          ...seedDelivery(cluster),
          source: { url: ECR_URL, tag: 'v1', verify: { provider: 'cosign', publicKeys: [KEY] } },
        },
      ],
      alarmTopic: sns.Topic.fromTopicArn(stack, 'Topic', `arn:aws:sns:${REGION}:${ACCOUNT}:oncall`),
    }));
    expect(warningsOf(stack)).toEqual([]);
  });
});
