// cdk-nag's AwsSolutions checks pass with no unacknowledged finding, and every acknowledgement says why.
import { Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { SEED_GATES, seedDelivery, synth } from './synth.ts';

interface Acknowledged {
  readonly path: string;
  readonly id: string;
  readonly reason: string;
}

function acknowledgements(root: IConstruct): Acknowledged[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([id, reason]) => ({ path: construct.node.path, id, reason })),
  );
}

describe('cdk-nag AwsSolutions', () => {
  const { sluice: seed } = synth(undefined, { nag: true });

  it('the seed scenario synthesizes with no unacknowledged finding', () => {
    const sluice = seed;
    // Logical ids and generated names end in an 8-character hash; shown as ######## here.
    const acknowledged = acknowledgements(sluice).map(
      ({ path, id }) =>
        `${path.replace(/^Test\/Sluice\//, '')}: ${id.replace(/[0-9A-F]{8}(?=[./])/g, '########')}`,
    );
    expect(acknowledged.sort()).toEqual([
      'DeployerRole: AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      'DeployerRole: AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:ap-northeast-1:123456789012:schedule/Test-Sluice-WindowSchedules-########/*]',
      'Failures/Queue: AwsSolutions::AwsSolutions-SQS3',
      'Gate/Function: AwsSolutions::AwsSolutions-L1',
      'GateRole: AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:ap-northeast-1:123456789012:schedule/Test-Sluice-WindowSchedules-########/*]',
      'Reconcile/Function: AwsSolutions::AwsSolutions-L1',
      'ReconcileInvokerRole: AwsSolutions::AwsSolutions-IAM5[Resource::<SluiceReconcileFunction########.Arn>:*]',
      'Spec/Function: AwsSolutions::AwsSolutions-L1',
      'SpecProviderRole: AwsSolutions::AwsSolutions-IAM5[Resource::<SluiceSpecFunction########.Arn>:*]',
    ]);
  });

  it('every acknowledgement carries its reason', () => {
    for (const { id, reason } of acknowledgements(seed)) {
      expect(reason.length, id).toBeGreaterThan(40);
    }
  });

  it('all options on (VPC, customer key, event bus, topic, an assumed role, approvers and break-glass with their runbooks): still no finding, and no managed policy', () => {
    const { sluice } = synth(
      (cluster, stack) => {
        const vpc = new ec2.Vpc(stack, 'Vpc', {
          maxAzs: 2,
          natGateways: 1,
          restrictDefaultSecurityGroup: false,
        });
        // The test's own VPC, not part of sluice.
        Validations.of(vpc).acknowledge({
          id: 'AwsSolutions::AwsSolutions-VPC7',
          reason: 'A VPC made for this test only.',
        });
        return {
          gates: SEED_GATES,
          deliveries: [
            seedDelivery(cluster),
            {
              ...seedDelivery({
                eks: {
                  name: 'shared',
                  region: 'eu-west-1',
                  roleArn: 'arn:aws:iam::210987654321:role/deployer',
                },
              }),
              name: 'cross-account',
            },
          ],
          vpc,
          encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }),
          eventBus: events.EventBus.fromEventBusName(stack, 'Bus', 'platform-events'),
          alarmTopic: sns.Topic.fromTopicArn(
            stack,
            'Topic',
            'arn:aws:sns:ap-northeast-1:123456789012:oncall',
          ),
        };
      },
      {
        nag: true,
        then: (sluice, stack) => {
          const root = new iam.AccountRootPrincipal();
          sluice.grantGateRequests(new iam.Role(stack, 'Approver', { assumedBy: root }), 'sre-approval');
          sluice.grantBreakGlass(new iam.Role(stack, 'Oncall', { assumedBy: root }));
        },
      },
    );
    // No managed policy: the VPC's network-interface actions are written out (no log writes on *).
    expect(acknowledgements(sluice).map((a) => a.id)).not.toContainEqual(expect.stringMatching(/IAM4/));
  });
});
