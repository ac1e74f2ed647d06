// Synthesizes Sluice stacks for the construct tests: the seed scenario, optionally with props changed.
import { App, Duration, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll } from 'vitest';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as events from 'aws-cdk-lib/aws-events';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { generateKeyPairSync } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';
import { Sluice, type SluiceDelivery, type SluiceGate, type SluiceProps } from '../../lib/index.ts';

export const ACCOUNT = '123456789012';
export const REGION = 'ap-northeast-1';
export const ECR_URL = `oci://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/oddy-test`;
export const REPOSITORY_ARN = `arn:aws:ecr:${REGION}:${ACCOUNT}:repository/oddy-test`;

export const SEED_GATES: SluiceGate[] = [
  {
    name: 'no-deploy-friday',
    default: 'open',
    window: Duration.hours(24),
    schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'Europe/Berlin', action: 'close' }],
  },
  { name: 'sre-approval', default: 'closed', window: Duration.hours(1) },
];

export function seedDelivery(cluster: SluiceDelivery['cluster']): SluiceDelivery {
  return {
    name: 'oddy-test',
    source: { url: ECR_URL, tag: 'v1' },
    path: '.',
    prune: true,
    interval: Duration.minutes(5),
    cluster,
    gates: [
      { name: 'no-deploy-friday', blocks: 'revisions' },
      { name: 'sre-approval', blocks: 'all' },
    ],
  };
}

export interface Synthesized {
  readonly app: App;
  readonly stack: Stack;
  readonly sluice: Sluice;
  readonly template: Template;
  /** The cloud assembly directory, kept only when bundling (handlers in `asset.<hash>/index.mjs`); remove it when done. */
  readonly outdir: string;
}

export interface SynthOptions {
  /** Run esbuild for the handlers; otherwise bundling is skipped (fast, for template-only tests). */
  readonly bundle?: boolean;
  /** Props for the stack; the seed's account and region by default. */
  readonly stackProps?: StackProps;
  /** Add cdk-nag's AwsSolutions checks (synthesis fails on an unacknowledged finding). */
  readonly nag?: boolean;
  /** Called with the Sluice before synthesis, e.g. to add grants. */
  readonly then?: (sluice: Sluice, stack: Stack) => void;
}

/**
 * Turns CloudFormation's own template checks (CDK_VALIDATION) off for the calling test file only,
 * restoring the variable after it: the unit tier runs files one after another in a shared process
 * (vitest.unit.config.ts, `isolate: false`), where a bare assignment would switch the checks off
 * for the files that follow. Call it at the top level of a test file.
 */
export function withoutCloudFormationChecks(): void {
  let before: string | undefined;
  beforeAll(() => {
    before = process.env.CDK_VALIDATION;
    process.env.CDK_VALIDATION = 'false';
  });
  afterAll(() => {
    if (before === undefined) delete process.env.CDK_VALIDATION;
    else process.env.CDK_VALIDATION = before;
  });
}

/** A stack with an imported cluster `prod` and a Sluice built by `props(cluster, stack)`. */
export function synth(
  props: (cluster: eks.ICluster, stack: Stack) => SluiceProps = (cluster) => ({
    gates: SEED_GATES,
    deliveries: [seedDelivery(cluster)],
  }),
  options: SynthOptions = {},
): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'sluice-cdk-'));
  const app = new App({
    outdir,
    context: {
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
      // Template problems CloudFormation would reject (e.g. circular dependencies) fail synthesis.
      '@aws-cdk/core:validateAgainstDefaultRules': true,
    },
  });
  if (options.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stack = new Stack(app, 'Test', options.stackProps ?? { env: { account: ACCOUNT, region: REGION } });
  const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', { clusterName: 'prod' });
  const sluice = new Sluice(stack, 'Sluice', props(cluster, stack));
  options.then?.(sluice, stack);
  const assembly = app.synth();
  const template = Template.fromJSON(
    assembly.getStackArtifact(stack.artifactId).template as Record<string, unknown>,
  );
  // Each assembly holds a copy of the 37 MB kubectl layer; only a bundled one is looked at later.
  if (!options.bundle) rmSync(outdir, { recursive: true, force: true });
  return { app, stack, sluice, template, outdir };
}

let seed: { readonly validation: string | undefined; readonly synthesized: Synthesized } | undefined;

/**
 * The seed scenario's stack (`synth()`), synthesized once per process and shared by the tests that
 * only read it: the unit tier runs a worker's files in one process, where several files check the
 * seed's template. A test that adds to the app or stack calls `synth()` for its own. Synthesized
 * again when CloudFormation's checks were turned on or off since (CDK_VALIDATION).
 */
export function seedSynth(): Synthesized {
  const validation = process.env.CDK_VALIDATION;
  if (seed === undefined || seed.validation !== validation) seed = { validation, synthesized: synth() };
  return seed.synthesized;
}

/** The one resource of `type` whose properties match `predicate`, by logical id. */
export function logicalId(
  template: Template,
  type: string,
  predicate: (properties: Record<string, unknown>, id: string) => boolean = () => true,
): string {
  const matches = Object.entries(template.findResources(type)).filter(([id, resource]) =>
    predicate((resource as { Properties?: Record<string, unknown> }).Properties ?? {}, id),
  );
  if (matches.length !== 1) {
    throw new Error(`expected one ${type} matching, found ${matches.map(([id]) => id).join(', ') || 'none'}`);
  }
  return matches[0]![0];
}

/** The function (logical id) whose description starts with `sluice: <prefix>`. */
export function functionId(template: Template, prefix: string): string {
  return logicalId(template, 'AWS::Lambda::Function', (p) =>
    String(p.Description ?? '').startsWith(`sluice: ${prefix}`),
  );
}

export const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
export const refOf = (id: string) => ({ Ref: id });

/** Every statement of the IAM policies attached to `roleId`, in order. */
export function statementsOf(template: Template, roleId: string): Record<string, unknown>[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    ((policy.Properties as { Roles: unknown[] }).Roles ?? []).some(
      (role) => JSON.stringify(role) === JSON.stringify(refOf(roleId)),
    ),
  );
  return policies.flatMap(
    (policy) =>
      (policy.Properties as { PolicyDocument: { Statement: Record<string, unknown>[] } }).PolicyDocument
        .Statement,
  );
}

/**
 * Every feature at once: gates with schedules in two time zones, approvals by revision and by two
 * people (one refusing self-approval), deliveries over two clusters in two regions (one imported, one named, one reached through
 * a cross-account role), an alarm gate, dependsOn with a soak, retryInterval, cosign verification, a VPC, a customer managed
 * key, an event bus, an alarm topic and a named deployer role.
 */
export function largeVariant(cluster: eks.ICluster, stack: Stack): SluiceProps {
  const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1, restrictDefaultSecurityGroup: false });
  // The test's own VPC, not part of sluice.
  Validations.of(vpc).acknowledge({
    id: 'AwsSolutions::AwsSolutions-VPC7',
    reason: 'A VPC made for this test only.',
  });
  const verify = { provider: 'cosign' as const, publicKeys: [publicKey] };
  const eu = { eks: { name: 'eu', region: 'eu-west-1' } };
  return {
    gates: [
      ...SEED_GATES,
      {
        name: 'maintenance',
        default: 'closed',
        schedules: [
          { cron: '0 2 ? * SUN *', timeZone: 'America/New_York', action: 'open', window: Duration.hours(4) },
          { cron: '0 22 ? * WED *', timeZone: 'Europe/Berlin', action: 'open', window: Duration.hours(2) },
        ],
      },
      {
        name: 'release-approval',
        default: 'closed',
        window: Duration.hours(2),
        approval: 'revision',
        preventSelfApproval: true,
      },
      { name: 'two-person', default: 'closed', window: Duration.hours(1), approvers: 2 },
      {
        name: 'healthy',
        default: 'open',
        alarms: ['checkout-5xx', `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:latency-p99`],
      },
    ],
    deliveries: [
      {
        ...seedDelivery(cluster),
        source: { url: ECR_URL, tag: 'v1', verify },
        retryInterval: Duration.minutes(2),
        decryption: {
          provider: 'sops',
          kmsKeyArns: [`arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`],
          ageKeySecretArn: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:sluice/age-AbCdEf`,
        },
        dependsOn: [{ name: 'platform', soak: Duration.minutes(30) }],
      },
      {
        name: 'platform',
        source: {
          url: `oci://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/platform`,
          semver: '^2.0.0',
          verify,
        },
        prune: true,
        cluster,
        gates: [
          { name: 'maintenance', blocks: 'all' },
          { name: 'healthy', blocks: 'revisions' },
        ],
      },
      {
        name: 'eu-app',
        source: { url: `oci://${ACCOUNT}.dkr.ecr.eu-west-1.amazonaws.com/oddy-test`, tag: 'v1', verify },
        prune: true,
        interval: Duration.minutes(10),
        cluster: eu,
        gates: [{ name: 'release-approval' }, { name: 'no-deploy-friday', blocks: 'revisions' }],
      },
      {
        name: 'shared',
        source: { url: 'oci://210987654321.dkr.ecr.us-east-1.amazonaws.com/shared/base', tag: 'v3', verify },
        prune: true,
        cluster: {
          eks: {
            name: 'shared',
            region: 'us-east-1',
            roleArn: 'arn:aws:iam::210987654321:role/sluice-target',
          },
        },
        gates: [{ name: 'two-person' }],
        deletionPolicy: 'Orphan',
      },
    ],
    vpc,
    encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }),
    eventBus: events.EventBus.fromEventBusName(stack, 'Bus', 'platform-events'),
    alarmTopic: sns.Topic.fromTopicArn(stack, 'Topic', `arn:aws:sns:${REGION}:${ACCOUNT}:oncall`),
    deployerRoleName: 'sluice-deployer',
    forwardedPushEvents: true,
  };
}

/**
 * Runs an example app (bin/app.ts unless `app` names another) as the CDK CLI does (CDK_OUTDIR, CDK_CONTEXT_JSON), offline,
 * without AWS_* or CDK_* variables and with bundling skipped; cdk-nag runs as the app sets it up.
 */
export async function synthExampleApp(
  context: Record<string, string>,
  app: { file: string; stackName: string } = { file: join('bin', 'app.ts'), stackName: 'Sluice' },
  /** CDK_* variables as the CDK CLI sets them for the app (none by default). */
  cliEnv: Record<string, string> = {},
): Promise<{ templatePath: string; cleanup: () => void }> {
  const outdir = mkdtempSync(join(tmpdir(), 'sluice-app-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(AWS_|CDK_)/.test(key)));
  await promisify(execFile)(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, app.file)], {
    cwd: PROJECT_ROOT,
    env: {
      ...env,
      ...cliEnv,
      CDK_OUTDIR: outdir,
      // CloudFormation's own template checks run in the construct tests; here only cdk-nag.
      CDK_VALIDATION: 'false',
      CDK_CONTEXT_JSON: JSON.stringify({ ...context, 'aws:cdk:bundling-stacks': [] }),
    },
  });
  return {
    templatePath: join(outdir, `${context.stackName ?? app.stackName}.template.json`),
    cleanup: () => rmSync(outdir, { recursive: true, force: true }),
  };
}
