// Day two, as a platform engineer walks it with the package alone: the packed tarball installed
// into a fresh app, the app synthesized by the CDK CLI, the stack "deployed" on the local
// components (dev/local-stack: its table, alarms, packaged functions, custom resources and outputs),
// then the operator's CLI against it with nothing but `--stack`: status, gates and rollout status;
// an alarm-gated first deploy that delivers once the new alarm has data, with no resume; the
// approvers' notice of the wave gate received through the stack's own rule and topic, and acted on.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CloudWatchClient, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putStandInAccessEntry, writeStandInEksCluster } from '../../dev/eks-clusters.ts';
import { deployLocally, type LocalStack } from '../../dev/local-stack/deploy.ts';
import type { Invocation } from '../../dev/local-stack/lambda-service.ts';
import { alarmStateChangeEvent } from '../support/alarms.ts';
import { stopDaemon } from '../../dev/processes.ts';
import { registryBinary } from '../../dev/provision.ts';
import { startRegistry, type Registry } from '../../dev/registry.ts';
import { STACK_DEPLOYER_ROLE, TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { consumerApp, devTool, type ConsumerApp } from '../support/consumer-app.ts';
import { DAY_TWO, dayTwoApp } from '../support/day-two-app.ts';
import { createNamespace, testbed } from '../support/testbed.ts';

const exec = promisify(execFile);
const bed = testbed();
const ACCOUNT = '123456789012';
let app: ConsumerApp;
let stack: LocalStack;
let registry: Registry;
let repository: string;

/** The packaged CLI as an operator runs it: the stack's services, no table or function named. */
async function sluice(who: TestIdentity, ...args: string[]) {
  const env: NodeJS.ProcessEnv = {
    ...stack.env,
    AWS_ACCESS_KEY_ID: who.accessKeyId,
    AWS_SECRET_ACCESS_KEY: who.secretAccessKey,
    ...(who.sessionToken ? { AWS_SESSION_TOKEN: who.sessionToken } : {}),
  };
  try {
    const { stdout, stderr } = await exec(
      join(app.dir, 'node_modules', '.bin', 'sluice'),
      ['--stack', DAY_TWO.stack, ...args],
      {
        cwd: app.dir,
        env,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * CloudWatch evaluates the new alarm as OK and says so on the default bus, where the stack's rule
 * (SluiceAlarmStateChanges…) sends it on; answers the runs it started.
 */
async function alarmReportsOk(): Promise<Invocation[]> {
  const { stackDeployer: deployer } = TEST_IDENTITIES;
  const cloudWatch = new CloudWatchClient({
    region: bed.region,
    endpoint: bed.cloudWatch.endpoint,
    credentials: { ...deployer },
  });
  await cloudWatch.send(
    new SetAlarmStateCommand({
      AlarmName: DAY_TWO.alarm,
      StateValue: 'OK',
      StateReason: 'no breaching data',
    }),
  );
  const before = stack.lambda.invocations.length;
  await stack.putEvents([
    alarmStateChangeEvent(DAY_TWO.alarm, 'OK', 'INSUFFICIENT_DATA', { account: ACCOUNT, region: bed.region }),
  ]);
  await stack.lambda.drained();
  return stack.lambda.invocations.slice(before);
}

beforeAll(async () => {
  // A public registry (anonymous pulls, `provider: 'generic'`): the local components' registry
  // stands for ECR, whose hosts the construct requires for `provider: 'aws'`.
  registry = await startRegistry(registryBinary(), mkdtempSync(join(tmpdir(), 'sluice-day-two-registry-')), {
    anonymous: true,
  });
  repository = `oci://${registry.host}/shop`;
  app = await consumerApp();
  writeFileSync(
    join(app.dir, 'day-two.mjs'),
    dayTwoApp({ account: ACCOUNT, region: bed.region, repository }),
  );
  const outdir = join(app.dir, 'cdk.out.day-two');
  mkdirSync(outdir, { recursive: true });
  await exec(
    devTool('cdk'),
    [
      'synth',
      '--app',
      'node day-two.mjs',
      '--output',
      outdir,
      '--quiet',
      '--no-notices',
      '--no-version-reporting',
    ],
    {
      cwd: app.dir,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(AWS_|CDK_)/.test(key))),
        CDK_DISABLE_CLI_TELEMETRY: 'true',
      },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  // The release CI pushes: one ConfigMap, tagged 1.0.0.
  const manifests = join(app.dir, 'release');
  mkdirSync(manifests, { recursive: true });
  writeFileSync(
    join(manifests, 'shop.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\ndata:\n  version: 1.0.0\n',
  );
  await exec(join(app.dir, 'node_modules', '.bin', 'sluice'), ['push', manifests, `${repository}:1.0.0`], {
    cwd: app.dir,
  });
  // The team's two EKS clusters (here both names answer from the local API server), each with the
  // namespace the delivery applies to.
  for (const cluster of DAY_TWO.clusters) await createNamespace(bed.kubeConfig(), DAY_TWO.namespace(cluster));
  for (const cluster of DAY_TWO.clusters)
    writeStandInEksCluster(bed.eks.clustersDir, cluster, {
      endpoint: bed.kube.server,
      caData: bed.kube.caData,
      region: bed.region,
      accessEntries: [],
    });
  stack = await deployLocally({
    assemblyDir: outdir,
    stackName: DAY_TWO.stack,
    account: ACCOUNT,
    components: bed,
    deployer: TEST_IDENTITIES.stackDeployer,
    identities: Object.values(TEST_IDENTITIES),
    identityOf: (role) =>
      role === STACK_DEPLOYER_ROLE ? TEST_IDENTITIES.stackDeployer : TEST_IDENTITIES.stackFunction,
  });
  await stack.lambda.drained();
  // docs/deploying.md, "Cluster access": an access entry for the DeployerRoleArn output on each cluster.
  for (const cluster of DAY_TWO.clusters)
    putStandInAccessEntry(bed.eks.clustersDir, cluster, {
      principalArn: stack.output('SluiceDeployerRoleArn'),
      accessPolicies: ['AmazonEKSClusterAdminPolicy'],
    });
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (registry) await stopDaemon(registry.pid);
  app?.remove();
});

describe('day two, from the packed package', () => {
  it('the deploy wrote the specs, and each delivery ran once: held at the health gate, whose new alarm has no data', () => {
    const runs = stack.lambda.invocations.filter((run) => run.how === 'Event');
    expect(runs.map((run) => run.event)).toEqual(
      expect.arrayContaining(DAY_TWO.clusters.map((delivery) => ({ delivery }))),
    );
    expect(runs.every((run) => 'result' in run.answer)).toBe(true);
  });

  it('`sluice --stack` finds the table in the outputs: status, gates and rollout status', async () => {
    const status = await sluice(TEST_IDENTITIES.carol, 'status', '--json');
    expect(status.stderr).toBe('');
    const statuses = JSON.parse(status.stdout) as { delivery: string }[];
    expect(statuses.map((s) => s.delivery).sort()).toEqual([...DAY_TWO.clusters].sort());
    const gates = JSON.parse((await sluice(TEST_IDENTITIES.carol, 'gates', '--json')).stdout) as {
      name: string;
      state: string;
      cause?: string;
    }[];
    expect(gates.find((gate) => gate.name === DAY_TWO.healthGate)).toMatchObject({ state: 'closed' });
    const rollout = await sluice(TEST_IDENTITIES.carol, 'rollout', 'status', DAY_TWO.rollout);
    expect(rollout.stderr).toBe('');
    expect(rollout.stdout).toContain(DAY_TWO.rollout);
  });

  it('the first deploy behind a new alarm delivers once the alarm reports OK: no resume', async () => {
    const held = await sluice(TEST_IDENTITIES.carol, 'status', 'canary');
    expect(held.stdout).toMatch(/no data/i);
    // CloudWatch evaluates the new alarm (its metric has no breaching data) and says so on the
    // default bus; the stack's rule sends that event to the reconcile function.
    const changed = await alarmReportsOk();
    // The alarm's event runs the deliveries behind its gate (and they their follow-ups).
    expect(changed[0]?.event).toMatchObject({ 'detail-type': 'CloudWatch Alarm State Change' });
    expect(changed.some((run) => run.how === 'Event')).toBe(true);
    await stack.lambda.drained();
    const canaryRuns = stack.lambda.invocations
      .slice(-changed.length)
      .filter((run) => JSON.stringify(run.event) === '{"delivery":"canary"}');
    expect(JSON.stringify(canaryRuns.map((run) => run.answer))).toContain('"outcome":"Succeeded"');
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    const applied = await core.readNamespacedConfigMap({
      name: 'shop',
      namespace: DAY_TWO.namespace('canary'),
    });
    expect(applied.data).toEqual({ version: '1.0.0' });
    const rollout = await sluice(TEST_IDENTITIES.carol, 'rollout', 'status', DAY_TWO.rollout);
    expect(rollout.stdout).toContain(DAY_TWO.approvalGate);
    expect(stack.lambda.invocations.filter((run) => 'error' in run.answer)).toEqual([]);
  });

  it("the approvers get the wave gate's notice from the stack's topic; the line it gives, run by two of them, moves wave 2", async () => {
    // Wave 1 is Ready; prod's next interval run (its schedule, within 5 minutes) finds wave 2
    // waiting at the approval gate, and the approvers are told.
    const prodInterval = stack.template
      .ofType('AWS::Scheduler::Schedule')
      .find((id) => JSON.stringify(stack.template.resource(id).Properties).includes('delivery prod every'))!;
    const waiting = await stack.fireSchedule(prodInterval);
    expect(JSON.stringify(waiting)).toContain('RolloutWaiting');
    await stack.lambda.drained();
    const topic = stack.template.ofType('AWS::SNS::Topic').find((id) => id.startsWith('Approvals'))!;
    const messages = stack.topicMessages(topic);
    const approvals = messages.filter((message) => message.includes('sluice gate open'));
    expect(approvals, messages.join('\n---\n')).toHaveLength(1);
    // The health gate's hold went to the same topic too, saying what lifts it: not an approval.
    for (const held of messages.filter((message) => !approvals.includes(message)))
      expect(held, held).not.toMatch(/\bapprove\b/i);
    const [notice] = approvals as [string];
    expect(notice).toContain(DAY_TWO.approvalGate);
    const line = /sluice gate open (\S+) .*?--function [\w-]+/.exec(notice)?.[0];
    expect(line, notice).toBeDefined();
    // The approver fills in the reason the line asks for.
    const args = line!
      .split(' ')
      .slice(1)
      .map((arg) => (arg === '<why>' ? 'CHG-42: canary healthy' : arg));
    for (const approver of [TEST_IDENTITIES.alice, TEST_IDENTITIES.bob]) {
      const approved = await sluice(approver, ...args);
      expect(approved.stderr, approved.stdout).toBe('');
    }
    await stack.lambda.drained();
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    const applied = await core.readNamespacedConfigMap({
      name: 'shop',
      namespace: DAY_TWO.namespace('prod'),
    });
    expect(applied.data).toEqual({ version: '1.0.0' });
    const done = await sluice(TEST_IDENTITIES.carol, 'rollout', 'status', DAY_TWO.rollout, '--exit-code');
    expect(done.code, done.stdout).toBe(0);
    expect(stack.lambda.invocations.filter((run) => 'error' in run.answer)).toEqual([]);
  });
});
