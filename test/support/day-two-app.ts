// The app a platform engineer writes on day one, against the installed package only (as an ES
// module, `node day-two.mjs`): two EKS clusters, a rollout of two waves whose second waits for a
// two-person approval, a health gate on a new CloudWatch alarm, an event bus and an approval topic,
// the approvers granted their requests and the operators a read-only grant.
import { IDENTITY_CENTER_APPROVER } from '../../bin/demo/grants.ts';
import { STACK_DEPLOYER_ROLE } from '../../dev/sigv4-identity.ts';

export const DAY_TWO = {
  stack: 'Shop',
  rollout: 'shop',
  approvalGate: 'release-approval',
  healthGate: 'shop-healthy',
  alarm: 'shop-5xx',
  clusters: ['canary', 'prod'] as const,
  /** The namespace each cluster's delivery applies to. */
  namespace: (cluster: string) => `shop-${cluster}`,
  approvers: IDENTITY_CENTER_APPROVER,
  deployerRole: STACK_DEPLOYER_ROLE,
} as const;

/** The app's source, for `account`/`region` and the artifacts at `repository` (oci://host/name). */
export function dayTwoApp({
  account,
  region,
  repository,
}: {
  account: string;
  region: string;
  repository: string;
}): string {
  const deliveries = DAY_TWO.clusters
    .map(
      (cluster) => `    {
      name: '${cluster}',
      source,
      prune: true,
      targetNamespace: '${DAY_TWO.namespace(cluster)}',
      cluster: { eks: { name: '${cluster}', region: '${region}' } },
      gates: [{ name: '${DAY_TWO.healthGate}' }],
    },`,
    )
    .join('\n');
  return `import { App, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Sluice } from 'sluice';

const app = new App();
const stack = new Stack(app, '${DAY_TWO.stack}', { env: { account: '${account}', region: '${region}' } });
const source = { url: '${repository}', semver: '1.x', provider: 'generic' };
const errors = new cloudwatch.Alarm(stack, 'Errors', {
  alarmName: '${DAY_TWO.alarm}',
  metric: new cloudwatch.Metric({ namespace: 'Shop', metricName: '5xx', statistic: 'Sum', period: Duration.minutes(1) }),
  threshold: 5,
  evaluationPeriods: 1,
});
const sluice = new Sluice(stack, 'Sluice', {
  deployerRoleName: '${DAY_TWO.deployerRole}',
  eventBus: new events.EventBus(stack, 'Releases'),
  approvalTopic: new sns.Topic(stack, 'Approvals'),
  gates: [
    { name: '${DAY_TWO.approvalGate}', default: 'closed', window: Duration.hours(1), approval: 'revision', approvers: 2 },
    { name: '${DAY_TWO.healthGate}', default: 'open', alarms: [errors] },
  ],
  deliveries: [
${deliveries}
  ],
  rollouts: [
    {
      name: '${DAY_TWO.rollout}',
      source,
      waves: [{ deliveries: ['canary'] }, { deliveries: ['prod'], gate: '${DAY_TWO.approvalGate}' }],
    },
  ],
});
sluice.grantGateRequests(iam.Role.fromRoleArn(stack, 'Approvers', '${DAY_TWO.approvers}'), '${DAY_TWO.approvalGate}');
sluice.grantRead(new iam.Role(stack, 'Operators', { assumedBy: new iam.AccountRootPrincipal() }));
`;
}
