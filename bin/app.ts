// The example CDK app: the seed scenario (delivery oddy-test behind no-deploy-friday and
// sre-approval) against an existing EKS cluster. Context values (-c key=value) set the target;
// with none given it synthesizes with placeholders, offline and without credentials.
import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Sluice, type SluiceClusterTarget } from '../lib/index.ts';

const app = new App();
const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === 'string' && value !== '' ? value : undefined;
};

// The CDK CLI always sets CDK_DEFAULT_REGION (us-east-1 when nothing is configured), but sets
// CDK_DEFAULT_ACCOUNT only with credentials: its region is the target's only beside its account.
// Offline, without either in context, the placeholders are 123456789012 in ap-northeast-1.
const cliAccount = process.env.CDK_DEFAULT_ACCOUNT;
const account = context('account') ?? cliAccount ?? '123456789012';
const region = context('region') ?? (cliAccount && process.env.CDK_DEFAULT_REGION) ?? 'ap-northeast-1';
const clusterName = context('clusterName') ?? 'prod';
const clusterRegion = context('clusterRegion') ?? region;
const clusterRoleArn = context('clusterRoleArn');
const repository = context('repository') ?? `oci://${account}.dkr.ecr.${region}.amazonaws.com/oddy-test`;

const stack = new Stack(app, context('stackName') ?? 'Sluice', {
  env: { account, region },
  description: 'sluice: serverless GitOps delivery for Amazon EKS',
  // The table holds the gates' audit trail and the inventories that say what to prune.
  terminationProtection: true,
});
const alarmTopicArn = context('alarmTopicArn');

// A cluster in this account and region is imported, and sluice creates its access entry; one
// elsewhere (or reached through a role) is named, and its access is granted outside this app.
const cluster: SluiceClusterTarget =
  clusterRoleArn || clusterRegion !== region
    ? {
        eks: { name: clusterName, region: clusterRegion, ...(clusterRoleArn && { roleArn: clusterRoleArn }) },
      }
    : eks.Cluster.fromClusterAttributes(stack, 'Cluster', { clusterName });

new Sluice(stack, 'Sluice', {
  // Named, so that a role in another account (clusterRoleArn) can trust it by name.
  deployerRoleName: context('deployerRoleName'),
  alarmTopic: alarmTopicArn ? sns.Topic.fromTopicArn(stack, 'AlarmTopic', alarmTopicArn) : undefined,
  gates: [
    {
      name: 'no-deploy-friday',
      description: 'No deploys on Fridays (Berlin time)',
      default: 'open',
      window: Duration.hours(24),
      schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
    },
    {
      name: 'sre-approval',
      description: 'An SRE approves a release for an hour',
      default: 'closed',
      window: Duration.hours(1),
    },
  ],
  deliveries: [
    {
      name: 'oddy-test',
      source: { url: repository, tag: context('tag') ?? 'v1' },
      path: context('path') ?? '.',
      prune: true,
      interval: Duration.minutes(5),
      cluster,
      gates: [
        { name: 'no-deploy-friday', blocks: 'revisions' },
        { name: 'sre-approval', blocks: 'all' },
      ],
    },
  ],
});

// The Sluice outputs the table, the functions, the deployer role, the runbooks and the dashboard
// itself (exported as <stack>-TableName, ...): `sluice --stack Sluice status` reads them.

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
