import { Aws, Duration, Token } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import { Construct } from 'constructs';
import {
  ConfigError,
  formatDuration,
  parseConfig,
  parseDelivery,
  type ConfigIssue,
  type Delivery,
  type DeliverySource,
  type SluiceConfig,
} from '../functions/core/config/index.ts';
import { healthCheckExprIssues } from '../functions/core/cel/check-config.ts';
import { readCalendarFiles } from '../functions/core/config/calendar-files.ts';
import { formatPath, isRecord } from '../functions/core/config/issues.ts';
import { partitionOfRegion } from '../functions/core/oci/ecr-host.ts';
import { parseKmsKeyArn } from '../functions/core/oci/kms-key-arn.ts';
import { stalenessProblem } from './alarms.ts';
import type { SluiceClusterTarget, SluiceDelivery, SluiceGate, SluiceProps, SluiceRollout } from './props.ts';
import { ecrRepositoryOf } from './sources.ts';
import { PROP_DEFAULTS } from './resolved-props.ts';

/** Prefix of every props error: `Sluice props: deliveries[oddy-test].interval: …`. */
export const PROPS_ORIGIN = 'Sluice props';

/** EventBridge Scheduler's shortest rate. */
const MIN_INTERVAL = Duration.minutes(1);
/** What a reconcile needs besides the delivery's timeout: fetch, prune, status. */
const RECONCILE_MARGIN = Duration.minutes(1);
const LAMBDA_MAX_TIMEOUT = Duration.minutes(15);

/** The props, validated by the config schema and normalised, and what the construct needs beside. */
export interface SluiceSpecs {
  readonly config: SluiceConfig;
  /** Per delivery name, the config-file form the spec resource writes (may hold cluster tokens). */
  readonly deliveryInputs: ReadonlyMap<string, Record<string, unknown>>;
  readonly gateInputs: ReadonlyMap<string, Record<string, unknown>>;
  /** Per rollout name, the config-file form the spec resource writes, each wave naming its deliveries. */
  readonly rolloutInputs: ReadonlyMap<string, Record<string, unknown>>;
  /** Per delivery name, the cluster passed as `eks.ICluster`. */
  readonly clusters: ReadonlyMap<string, eks.ICluster>;
  /** Every gate's alarms as written to the table: names, ARNs, and tokens of either. */
  readonly alarmEntries: readonly string[];
  /** Per gate name, the alarms passed as `IAlarm` constructs (its spec is written after them). */
  readonly gateAlarmConstructs: ReadonlyMap<string, readonly cloudwatch.IAlarm[]>;
}

type Path = readonly (string | number)[];

/** Collects problems, each with the path (as the schema reports it) of the prop it is about. */
class Issues {
  readonly list: ConfigIssue[] = [];
  constructor(private readonly root: unknown) {}
  add(path: Path, message: string): void {
    this.list.push({ path: formatPath(path, this.root), message });
  }
}

export function isCluster(target: SluiceClusterTarget): target is eks.ICluster {
  return Construct.isConstruct(target) && 'clusterName' in target;
}

/**
 * Validates props with the shared zod schema (durations become `300s`-style strings first) and
 * the limits of the AWS services used; throws one ConfigError naming every bad prop.
 */
export function resolveSpecs(
  props: SluiceProps,
  env: StackEnv = { account: Aws.ACCOUNT_ID, region: Aws.REGION },
): SluiceSpecs {
  const deliveries = props.deliveries ?? [];
  const gates = props.gates ?? [];
  const rollouts = props.rollouts ?? [];
  // Names for error paths come from the raw props (formatPath shows `deliveries[<name>]`).
  const issues = new Issues({ deliveries, gates, rollouts });
  checkFunctionProps(props, issues);

  const clusters = new Map<string, eks.ICluster>();
  const deliveryInputs: Record<string, unknown>[] = [];
  const deliveryValidation: Record<string, unknown>[] = [];
  deliveries.forEach((delivery, index) => {
    const [input, validation] = deliveryInput(delivery, ['deliveries', index], issues);
    deliveryInputs.push(input);
    deliveryValidation.push(validation);
    if (isCluster(delivery.cluster) && typeof delivery.name === 'string')
      clusters.set(delivery.name, delivery.cluster);
  });
  const gateInputPairs = gates.map((gate, index) => gateInput(gate, ['gates', index], issues, env));
  const gateInputs = gateInputPairs.map(([stored]) => stored);
  const gateValidation = gateInputPairs.map(([, validated]) => validated);
  const rolloutInputs = rollouts.map((rollout, index) => rolloutInput(rollout, ['rollouts', index], issues));

  let config: SluiceConfig | undefined;
  try {
    config = parseConfig(
      { gates: gateValidation, deliveries: deliveryValidation, rollouts: rolloutInputs },
      PROPS_ORIGIN,
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues.list.push(...error.issues);
  }
  // Also for deliveries that parse on their own when others did not, so every problem is listed at once.
  const deliveryList = config?.deliveries ?? deliveryValidation.map(parsedOrUndefined);
  checkServiceLimits(deliveryList, props, issues);
  checkSignatureKeys(
    [
      ...deliveryList.map((d, i) => [['deliveries', i], d?.source] as const),
      ...(config?.rollouts ?? []).map((r, i) => [['rollouts', i], r.source] as const),
    ],
    env,
    issues,
  );
  issues.list.push(...healthCheckExprIssues(deliveryList.filter((d): d is Delivery => d !== undefined)));
  if (issues.list.length > 0 || !config) throw new ConfigError(PROPS_ORIGIN, issues.list);

  return {
    config,
    deliveryInputs: new Map(deliveryInputs.map((input, i) => [config.deliveries[i]!.name, input])),
    gateInputs: new Map(gateInputs.map((input, i) => [config.gates[i]!.name, input])),
    rolloutInputs: new Map(
      config.rollouts.map((rollout, i) => [
        rollout.name,
        {
          ...rolloutInputs[i],
          // Stored with its members named: the spec function sees no other delivery to match patterns against.
          waves: rollout.waves.map((wave, w) => ({
            ...(rolloutInputs[i]!.waves as Record<string, unknown>[])[w],
            deliveries: wave.deliveries,
          })),
        },
      ]),
    ),
    clusters,
    alarmEntries: [
      ...new Set(
        gateInputs.flatMap((input) => (Array.isArray(input.alarms) ? (input.alarms as string[]) : [])),
      ),
    ],
    gateAlarmConstructs: new Map(
      config.gates.map((gate, i) => [gate.name, (gates[i]?.alarms ?? []).filter(isAlarm)]),
    ),
  };
}

function checkFunctionProps(props: SluiceProps, issues: Issues): void {
  const timeout = props.reconcileTimeout;
  if (timeout !== undefined) {
    const ms = durationMs(timeout, ['reconcileTimeout'], issues);
    if (ms !== undefined && ms > LAMBDA_MAX_TIMEOUT.toMilliseconds())
      issues.add(['reconcileTimeout'], `${formatDuration(ms)} is longer than 15m, the Lambda maximum`);
    if (ms !== undefined && ms <= RECONCILE_MARGIN.toMilliseconds())
      issues.add(['reconcileTimeout'], `${formatDuration(ms)} is too short: give a reconcile more than 1m`);
  }
  const memory = props.reconcileMemorySize;
  if (
    memory !== undefined &&
    !Token.isUnresolved(memory) &&
    !(Number.isInteger(memory) && memory >= 128 && memory <= 10240)
  )
    issues.add(['reconcileMemorySize'], `${memory} is not a Lambda memory size (128 to 10240 MB)`);
  const reserved = props.reconcileReservedConcurrency;
  if (
    reserved !== undefined &&
    !Token.isUnresolved(reserved) &&
    !(Number.isInteger(reserved) && reserved > 0)
  )
    issues.add(['reconcileReservedConcurrency'], `${reserved} is not a positive integer`);
  const roleName = props.deployerRoleName;
  if (roleName !== undefined && !Token.isUnresolved(roleName) && !/^[\w+=,.@-]{1,64}$/.test(roleName))
    issues.add(
      ['deployerRoleName'],
      `"${roleName}" is not an IAM role name (1 to 64 letters, digits and +=,.@_-)`,
    );
  if (props.blockedAlarmThreshold !== undefined) {
    const ms = durationMs(props.blockedAlarmThreshold, ['blockedAlarmThreshold'], issues);
    if (ms !== undefined && ms < MIN_INTERVAL.toMilliseconds())
      issues.add(['blockedAlarmThreshold'], `${formatDuration(ms)} is shorter than 1m`);
  }
}

/** `[input written to the table, input validated now]`: they differ only in an ICluster's tokens. */
function deliveryInput(
  delivery: SluiceDelivery,
  path: Path,
  issues: Issues,
): [Record<string, unknown>, Record<string, unknown>] {
  // Not an object at all: the schema says so.
  if (!isRecord(delivery)) return [delivery as never, delivery as never];
  const { cluster, interval, retryInterval, timeout, dependsOn, ...rest } = delivery;
  forbidTokens(rest, path, issues);
  const input: Record<string, unknown> = {
    ...rest,
    dependsOn: Array.isArray(dependsOn)
      ? (dependsOn as unknown[]).map((dependency, index) => {
          if (!isRecord(dependency)) {
            forbidTokens(dependency, [...path, 'dependsOn', index], issues);
            return dependency;
          }
          const { soak, ...fields } = dependency;
          forbidTokens(fields, [...path, 'dependsOn', index], issues);
          const soakPath = [...path, 'dependsOn', index, 'soak'];
          return defined({ ...fields, soak: durationText(soak as Duration | undefined, soakPath, issues) });
        })
      : dependsOn,
    interval: durationText(interval, [...path, 'interval'], issues),
    retryInterval: durationText(retryInterval, [...path, 'retryInterval'], issues),
    timeout: durationText(timeout, [...path, 'timeout'], issues),
  };
  if (cluster === undefined || !isCluster(cluster)) {
    forbidTokens(cluster, [...path, 'cluster'], issues);
    return [defined({ ...input, cluster }), defined({ ...input, cluster })];
  }
  const eks = { name: cluster.clusterName, region: cluster.env.region };
  // Tokens (a cluster defined in this app, an environment-agnostic stack) resolve at deploy time,
  // where the spec function validates again; until then a placeholder stands in.
  const known = {
    name: Token.isUnresolved(eks.name) ? 'cluster-from-token' : eks.name,
    region: Token.isUnresolved(eks.region) ? 'us-east-1' : eks.region,
  };
  return [defined({ ...input, cluster: { eks } }), defined({ ...input, cluster: { eks: known } })];
}

/** `[input written to the table, input validated now]`: they differ only in alarms given as tokens. */
function gateInput(
  gate: SluiceGate,
  path: Path,
  issues: Issues,
  env: StackEnv,
): [Record<string, unknown>, Record<string, unknown>] {
  if (!isRecord(gate)) return [gate as never, gate as never];
  const { window, schedules, calendars, maxOverride, alarms, ...rest } = gate;
  forbidTokens(rest, path, issues);
  forbidTokens(calendars, [...path, 'calendars'], issues);
  const [stored, validated] = alarmInputs(alarms, [...path, 'alarms'], issues, env);
  const input = defined({
    ...rest,
    calendars: calendarsRead(calendars, path, issues),
    window: durationText(window, [...path, 'window'], issues),
    maxOverride: durationText(maxOverride, [...path, 'maxOverride'], issues),
    schedules: Array.isArray(schedules)
      ? schedules.map((schedule, index) => {
          if (!isRecord(schedule)) return schedule;
          const { window: scheduleWindow, ...fields } = schedule;
          forbidTokens(fields, [...path, 'schedules', index], issues);
          const windowPath = [...path, 'schedules', index, 'window'];
          return defined({ ...fields, window: durationText(scheduleWindow, windowPath, issues) });
        })
      : schedules,
  });
  return [defined({ ...input, alarms: stored }), defined({ ...input, alarms: validated })];
}

/**
 * A `verify.kmsKeyArn` of another partition than the stack's is refused, naming it: IAM cannot
 * grant kms:GetPublicKey across partitions, so every artifact would be refused. (An
 * environment-agnostic stack's partition is known at deploy only.) Another Region or account is
 * fine: the key is read in its own Region, and its key policy decides whether this stack may.
 */
function checkSignatureKeys(
  sources: readonly (readonly [Path, DeliverySource | undefined])[],
  env: StackEnv,
  issues: Issues,
): void {
  if (Token.isUnresolved(env.region)) return;
  const partition = partitionOfRegion(env.region);
  for (const [path, source] of sources) {
    const verify = source?.verify;
    if (!verify || !('kmsKeyArn' in verify)) continue;
    const key = parseKmsKeyArn(verify.kmsKeyArn);
    if (key && key.partition !== partition)
      issues.add(
        [...path, 'source', 'verify', 'kmsKeyArn'],
        `KMS key ${verify.kmsKeyArn} is in partition ${key.partition}, but this stack deploys to ${env.region} (partition ${partition}): IAM cannot grant kms:GetPublicKey on a key of another partition, so every artifact would be refused. Sign with a key of partition ${partition}`,
      );
  }
}

/** The stack's account and region (tokens when it is environment-agnostic). */
export interface StackEnv {
  readonly account: string;
  readonly region: string;
}

const isAlarm = (value: unknown): value is cloudwatch.IAlarm =>
  Construct.isConstruct(value) && 'alarmArn' in value && 'alarmName' in value;

/**
 * A gate's alarms as written to the table (an IAlarm as its ARN, a token as it is: CloudFormation
 * resolves it) and as validated now (a token as a placeholder name of its own). An ARN of another
 * account or region than the stack's is refused, naming it: sluice reads alarms where it runs.
 */
function alarmInputs(
  alarms: SluiceGate['alarms'],
  path: Path,
  issues: Issues,
  env: StackEnv,
): [unknown, unknown] {
  if (!Array.isArray(alarms)) return [alarms, alarms];
  const stored: unknown[] = [];
  const validated: unknown[] = [];
  alarms.forEach((alarm: unknown, index) => {
    const entry = isAlarm(alarm) ? alarmEntry(alarm) : alarm;
    if (isAlarm(alarm)) foreignAlarm(alarm.node.path, alarm.env, [...path, index], issues, env);
    if (typeof entry === 'string' && Token.isUnresolved(entry)) {
      stored.push(entry);
      validated.push(`alarm-from-token-${index}`);
      return;
    }
    if (typeof entry === 'string') {
      const arn = ALARM_ARN_PARTS.exec(entry);
      if (arn)
        foreignAlarm(`"${entry}"`, { region: arn[1]!, account: arn[2]! }, [...path, index], issues, env);
    } else forbidTokens(entry, [...path, index], issues);
    stored.push(entry);
    validated.push(entry);
  });
  return [stored, validated];
}

/** `arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>`: the region and account. */
const ALARM_ARN_PARTS = /^arn:aws[\w-]*:cloudwatch:([a-z]{2}(?:-[a-z]+)+-\d+):(\d{12}):alarm:/;

/**
 * An IAlarm as the gate names it: its name when that is a literal or a reference to an alarm's
 * name (`Ref`), else its ARN (an imported alarm's, or a token that resolves to one).
 */
function alarmEntry(alarm: cloudwatch.IAlarm): string {
  if (!Token.isUnresolved(alarm.alarmArn)) return alarm.alarmArn;
  if (!Token.isUnresolved(alarm.alarmName)) return alarm.alarmName;
  return alarm.alarmArn;
}

function foreignAlarm(
  what: string,
  where: { readonly account: string; readonly region: string },
  path: Path,
  issues: Issues,
  env: StackEnv,
): void {
  const differs = (a: string, b: string) => !Token.isUnresolved(a) && !Token.isUnresolved(b) && a !== b;
  const account = differs(where.account, env.account);
  const region = differs(where.region, env.region);
  if (!account && !region) return;
  issues.add(
    path,
    `alarm ${what} is in ${account ? `account ${where.account}` : ''}${account && region ? ' and ' : ''}${region ? `region ${where.region}` : ''}, not this stack's (${env.account}, ${env.region}): sluice reads an alarm gate's alarms with DescribeAlarms where it runs, and their state changes reach only their own account and region, so the gate would stay closed. Make the alarm in this stack's account and region (on the other account's metric, with CloudWatch cross-account observability)`,
  );
}

function rolloutInput(rollout: SluiceRollout, path: Path, issues: Issues): Record<string, unknown> {
  if (!isRecord(rollout)) return rollout as never;
  const { waves, ...rest } = rollout;
  forbidTokens(rest, path, issues);
  return defined({
    ...rest,
    waves: Array.isArray(waves)
      ? waves.map((wave, index) => {
          if (!isRecord(wave)) return wave;
          const { soak, ...fields } = wave;
          forbidTokens(fields, [...path, 'waves', index], issues);
          return defined({ ...fields, soak: durationText(soak, [...path, 'waves', index, 'soak'], issues) });
        })
      : waves,
  });
}

/** The calendars with each `file` read at synth (relative to the current directory) into `ics`. */
function calendarsRead(calendars: SluiceGate['calendars'], path: Path, issues: Issues): unknown {
  if (!Array.isArray(calendars)) return calendars;
  // One calendar at a time, so that an unreadable file is reported at its own index.
  return calendars.map((calendar: unknown, index) => {
    try {
      const [read] = readCalendarFiles([{ calendars: [calendar] }], process.cwd(), PROPS_ORIGIN) as {
        calendars: unknown[];
      }[];
      return read!.calendars[0];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of error.issues) issues.add([...path, 'calendars', index, 'file'], issue.message);
      return calendar;
    }
  });
}

/**
 * `Duration.minutes(5)` → `300s` (`1500ms` when not whole seconds), `Duration.days(1)` → `1d` (a
 * schedule window in days is calendar days); strings pass to the schema as they are.
 */
function durationText(value: Duration | undefined, path: Path, issues: Issues): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  const ms = durationMs(value, path, issues);
  if (ms === undefined) return undefined;
  if (value.unitLabel() === 'days' && ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function durationMs(value: Duration, path: Path, issues: Issues): number | undefined {
  if (!(value instanceof Duration)) {
    issues.add(path, 'must be a Duration (e.g. Duration.minutes(5))');
    return undefined;
  }
  if (value.isUnresolved()) {
    issues.add(path, 'must be known at synth time, not a token');
    return undefined;
  }
  try {
    return value.toMilliseconds();
  } catch (error) {
    issues.add(path, (error as Error).message);
    return undefined;
  }
}

/** sluice scopes IAM, rules and schedules by these values, so they must be literals. */
function forbidTokens(value: unknown, path: Path, issues: Issues): void {
  if (Token.isUnresolved(value)) {
    issues.add(path, 'must be known at synth time, not a token (sluice scopes permissions and rules by it)');
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => forbidTokens(item, [...path, index], issues));
  } else if (isRecord(value) && !Construct.isConstruct(value)) {
    for (const [key, item] of Object.entries(value)) forbidTokens(item, [...path, key], issues);
  }
}

function defined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}

function parsedOrUndefined(input: unknown): Delivery | undefined {
  try {
    return parseDelivery(input);
  } catch {
    return undefined;
  }
}

/**
 * The deliveries whose interval a staleness alarm watches: each one not suspended, or with
 * `monitoring: 'fleet'` the one of the shortest interval (the fleet's alarm watches that). Only
 * those with an interval Scheduler takes (whole minutes): the others are refused for that.
 */
function stalenessWatched(deliveries: readonly (Delivery | undefined)[], props: SluiceProps): Set<Delivery> {
  const minute = MIN_INTERVAL.toMilliseconds();
  const active = deliveries.filter(
    (d): d is Delivery =>
      d !== undefined && !d.suspend && d.intervalMs >= minute && d.intervalMs % minute === 0,
  );
  if (props.monitoring !== 'fleet' || active.length === 0) return new Set(active);
  return new Set([active.reduce((shortest, d) => (d.intervalMs < shortest.intervalMs ? d : shortest))]);
}

/** What the schema cannot know: Scheduler's rates, the function's timeout, what Lambda can reach. */
function checkServiceLimits(
  deliveries: readonly (Delivery | undefined)[],
  props: SluiceProps,
  issues: Issues,
): void {
  const timeout = props.reconcileTimeout ?? PROP_DEFAULTS.reconcileTimeout;
  const functionTimeout =
    timeout instanceof Duration && !timeout.isUnresolved()
      ? timeout.toMilliseconds()
      : LAMBDA_MAX_TIMEOUT.toMilliseconds();
  const margin = RECONCILE_MARGIN.toMilliseconds();
  const watchedForStaleness = stalenessWatched(deliveries, props);
  deliveries.forEach((delivery, index) => {
    if (!delivery) return;
    const path = ['deliveries', index];
    if ('kubeconfig' in delivery.cluster) {
      issues.add(
        [...path, 'cluster'],
        'a kubeconfig file cannot be read by the reconcile function; use { eks: { name, region } } or an eks.ICluster',
      );
    }
    const interval = formatDuration(delivery.intervalMs);
    if (delivery.intervalMs < MIN_INTERVAL.toMilliseconds()) {
      issues.add(
        [...path, 'interval'],
        `${interval} is shorter than 1m, the shortest EventBridge Scheduler rate`,
      );
    } else if (delivery.intervalMs % MIN_INTERVAL.toMilliseconds() !== 0) {
      issues.add(
        [...path, 'interval'],
        `${interval} is not whole minutes, as EventBridge Scheduler rates must be`,
      );
    }
    if (watchedForStaleness.has(delivery)) {
      const problem = stalenessProblem(delivery.intervalMs);
      if (problem) issues.add([...path, 'interval'], problem);
    }
    if (delivery.timeoutMs + margin > functionTimeout) {
      issues.add(
        [...path, 'timeout'],
        `${formatDuration(delivery.timeoutMs)} does not fit in the reconcile function's timeout of ${formatDuration(functionTimeout)} with 1m to spare for fetching, pruning and recording status (lower it or raise reconcileTimeout)`,
      );
    }
    if (delivery.source.provider === 'aws' && !ecrRepositoryOf(delivery.source.url)) {
      issues.add(
        [...path, 'source', 'url'],
        `"${delivery.source.url}" is not an ECR repository (<account>.dkr.ecr.<region>.amazonaws.com/<repository>), which provider "aws" needs; set provider: 'generic' for other registries`,
      );
    }
  });
}
