// Bad props fail at construction, before any resource exists, with messages naming the prop.
import { App, Duration, Lazy, Stack } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/core/config/index.ts';
import { Sluice, type SluiceDelivery, type SluiceGate, type SluiceProps } from '../../lib/index.ts';
import { ECR_URL, SEED_GATES } from './synth.ts';

const CLUSTER = { eks: { name: 'prod', region: 'ap-northeast-1' } };
// An App without an outdir makes a temp dir of its own that nothing removes: these share one.
const outdir = mkdtempSync(join(tmpdir(), 'sluice-validation-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function delivery(fields: Partial<SluiceDelivery> = {}): SluiceDelivery {
  return { name: 'oddy-test', source: { url: ECR_URL }, cluster: CLUSTER, ...fields };
}

/** The error constructing a Sluice with these props throws. */
function errorOf(props: SluiceProps | ((stack: Stack) => SluiceProps)): ConfigError {
  const stack = new Stack(new App({ outdir }), 'Test', {
    env: { account: '123456789012', region: 'ap-northeast-1' },
  });
  try {
    new Sluice(stack, 'Sluice', typeof props === 'function' ? props(stack) : props);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect(stack.node.findAll().filter((c) => c.node.id === 'Table')).toEqual([]);
    return error as ConfigError;
  }
  throw new Error('expected the props to be refused');
}

describe('Sluice props validation', () => {
  it('an interval under a minute: the shortest EventBridge Scheduler rate', () => {
    expect(errorOf({ deliveries: [delivery({ interval: Duration.seconds(30) })] }).message).toBe(
      'Sluice props: deliveries[oddy-test].interval: 30s is shorter than 1m, the shortest EventBridge Scheduler rate',
    );
  });

  it('a soak that is not a Duration, or no longer than zero', () => {
    const deliveries = (soak: unknown) => [
      delivery({ name: 'staging' }),
      delivery({ dependsOn: [{ name: 'staging', soak: soak as Duration }] }),
    ];
    expect(errorOf({ deliveries: deliveries(30) }).message).toBe(
      'Sluice props: deliveries[oddy-test].dependsOn[staging].soak: must be a Duration (e.g. Duration.minutes(5))',
    );
    expect(errorOf({ deliveries: deliveries(Duration.seconds(0)) }).message).toContain(
      'deliveries[oddy-test].dependsOn[staging].soak: ',
    );
  });

  it('dependsOn naming a delivery that is not in the props, or going round in a cycle', () => {
    expect(errorOf({ deliveries: [delivery({ dependsOn: ['infra'] })] }).message).toBe(
      'Sluice props: deliveries[oddy-test].dependsOn[0]: delivery "oddy-test" depends on "infra", which is not defined in deliveries',
    );
    const cycle = [delivery({ dependsOn: ['infra'] }), delivery({ name: 'infra', dependsOn: ['oddy-test'] })];
    expect(errorOf({ deliveries: cycle }).message).toBe(
      'Sluice props: deliveries[oddy-test].dependsOn: dependsOn forms a cycle: oddy-test → infra → oddy-test',
    );
  });

  it('a health check expression that does not compile, named by its field', () => {
    const current = "status.conditions.exist(c, c.type == 'Ready')";
    const healthCheckExprs = [{ apiVersion: 'example.com/v1', kind: 'Widget', current }];
    expect(errorOf({ deliveries: [delivery({ wait: true, healthCheckExprs })] }).message).toBe(
      `Sluice props: deliveries[oddy-test].healthCheckExprs[0].current: "${current}" calls exist(), which is not a CEL function`,
    );
  });

  it('an interval that is not whole minutes', () => {
    expect(errorOf({ deliveries: [delivery({ interval: Duration.seconds(90) })] }).message).toBe(
      'Sluice props: deliveries[oddy-test].interval: 1m30s is not whole minutes, as EventBridge Scheduler rates must be',
    );
  });

  it("a timeout that does not fit in the reconcile function's timeout", () => {
    expect(errorOf({ deliveries: [delivery({ timeout: Duration.minutes(15) })] }).message).toBe(
      "Sluice props: deliveries[oddy-test].timeout: 15m does not fit in the reconcile function's timeout of 15m with 1m to spare for fetching, pruning and recording status (lower it or raise reconcileTimeout)",
    );
    expect(errorOf({ reconcileTimeout: Duration.minutes(5), deliveries: [delivery()] }).message).toMatch(
      /^Sluice props: deliveries\[oddy-test\]\.timeout: 5m does not fit in the reconcile function's timeout of 5m/,
    );
  });

  it('schema errors come from the shared config schema, with the same paths', () => {
    const error = errorOf({
      gates: SEED_GATES,
      deliveries: [
        delivery({
          source: { url: 'https://example.com/app' },
          gates: [{ name: 'sre-aproval' }],
          deletionPolicy: 'Keep' as never,
        }),
      ],
    });
    expect(error.issues).toEqual([
      {
        path: 'deliveries[oddy-test].source.url',
        message: expect.stringContaining('"https://example.com/app" must start with oci://'),
      },
      { path: 'deliveries[oddy-test].deletionPolicy', message: 'must be one of Delete, Orphan, not "Keep"' },
      {
        path: 'deliveries[oddy-test].gates[sre-aproval].name',
        message:
          'delivery "oddy-test" references gate "sre-aproval", which is not defined in gates (did you mean "sre-approval"? defined: no-deploy-friday, sre-approval)',
      },
    ]);
    expect(error.message.split('\n')[0]).toMatch(/^Sluice props: deliveries\[oddy-test\]\.source\.url: /);
  });

  it('gate schedules: cron, time zone and window', () => {
    const gate: SluiceGate = {
      name: 'freeze',
      default: 'open',
      schedules: [
        { cron: '0 0 * * FRI *', timeZone: 'Mars/Olympus', action: 'close', window: Duration.millis(0) },
      ],
    };
    const messages = errorOf({ gates: [gate] }).message.split('\n');
    expect(messages).toEqual([
      expect.stringMatching(/^Sluice props: gates\[freeze\]\.schedules\[0\]\.cron: /),
      'Sluice props: gates[freeze].schedules[0].timeZone: "Mars/Olympus" is not an IANA time zone (e.g. UTC, Europe/Berlin)',
      'Sluice props: gates[freeze].schedules[0].window: must be longer than zero (use e.g. 30s, 5m, 24h, 7d)',
    ]);
  });

  it('a kubeconfig cluster cannot be reached from Lambda', () => {
    const kubeconfig = { kubeconfig: './kubeconfig' } as unknown as SluiceDelivery['cluster'];
    expect(errorOf({ deliveries: [delivery({ cluster: kubeconfig })] }).message).toBe(
      'Sluice props: deliveries[oddy-test].cluster: a kubeconfig file cannot be read by the reconcile function; use { eks: { name, region } } or an eks.ICluster',
    );
  });

  it('provider aws needs an ECR repository URL', () => {
    const source = { url: 'oci://ghcr.io/org/app', provider: 'aws' as const };
    expect(errorOf({ deliveries: [delivery({ source })] }).message).toMatch(
      /^Sluice props: deliveries\[oddy-test\]\.source\.url: "oci:\/\/ghcr\.io\/org\/app" is not an ECR repository/,
    );
  });

  it('tokens where sluice needs the value at synth time', () => {
    const url = Lazy.string({ produce: () => ECR_URL });
    expect(errorOf({ deliveries: [delivery({ source: { url } })] }).issues).toContainEqual({
      path: 'deliveries[oddy-test].source.url',
      message: 'must be known at synth time, not a token (sluice scopes permissions and rules by it)',
    });
  });

  it('function props: Lambda limits, an IAM role name', () => {
    expect(
      errorOf({
        reconcileTimeout: Duration.minutes(20),
        reconcileMemorySize: 64,
        deployerRoleName: 'sluice deployer/prod',
        blockedAlarmThreshold: Duration.seconds(10),
      }).message.split('\n'),
    ).toEqual([
      'Sluice props: reconcileTimeout: 20m is longer than 15m, the Lambda maximum',
      'Sluice props: reconcileMemorySize: 64 is not a Lambda memory size (128 to 10240 MB)',
      'Sluice props: deployerRoleName: "sluice deployer/prod" is not an IAM role name (1 to 64 letters, digits and +=,.@_-)',
      'Sluice props: blockedAlarmThreshold: 10s is shorter than 1m',
    ]);
  });

  it('every problem at once, deliveries named by index when their name is bad', () => {
    const error = errorOf({
      deliveries: [
        delivery({ interval: Duration.seconds(20) }),
        delivery({ name: 'Bad_Name', interval: Duration.minutes(2) }),
        delivery({ name: 'oddy-test', interval: Duration.seconds(45) }),
      ],
    });
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'deliveries[1].name',
      'deliveries[2].name',
      'deliveries[0].interval',
      'deliveries[2].interval',
    ]);
    expect(error.message).toContain(
      'Sluice props: deliveries[2].name: duplicate delivery name "oddy-test" (also deliveries[0])',
    );
  });

  it('an eks.ICluster from this app is accepted as the cluster', () => {
    const stack = new Stack(new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } }), 'Test', {
      env: { account: '123456789012', region: 'ap-northeast-1' },
    });
    const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', { clusterName: 'prod' });
    const sluice = new Sluice(stack, 'Sluice', { deliveries: [delivery({ cluster })] });
    expect(sluice.specs.config.deliveries[0]!.cluster).toEqual(CLUSTER);
  });
});
