// The Monday-morning release wave, locally: N deliveries of Flux's benchmark shape (4 objects
// each) over several API servers standing for clusters, all held by a closed gate; the gate
// opens and the reconcile function's window-end event ({"gateOpened"}) fans out to one invocation
// per delivery, run by a stand-in for Lambda with bounded concurrency, against DynamoDB Local.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { clusterKey, parseDelivery, parseGate } from '../../functions/core/config/index.ts';
import { reconcileDepsFromEnvironment } from '../../functions/core/environment.ts';
import { handleGateEvent } from '../../functions/core/gates/requests.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/outcomes.ts';
import type { ReconcileTrigger } from '../../functions/core/reconcile/triggers.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { clusterSlotsKey } from '../../functions/core/store/cluster-slots.ts';
import { putGate } from '../../functions/core/store/gates.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { tableClient } from '../../functions/core/store/table-client.ts';
import { reconcileHandler } from '../../functions/reconcile/handler.ts';
import type { Components } from '../../dev/components.ts';
import { appFile, podinfoApp, pool } from '../apps.ts';
import { cpuMeter, ownCpuSeconds } from '../cpu.ts';
import { pushFiles } from '../delivery.ts';
import type { LocalCluster } from '../../dev/clusters.ts';
import { SimLambda, simScheduler } from '../../dev/lambda.ts';
import { simulateRollout, type Harness, type RolloutRun } from './rollout.ts';
import { simClock } from './sim-clock.ts';
import { InFlight, meteredDynamoDb, peakInFlightRequests, type TableUse } from './meter.ts';

export interface ScaleOptions {
  readonly deliveries: number;
  /** Reconciles Lambda runs at once (the function's concurrency). */
  readonly lambdaConcurrency: number;
  readonly clusterConcurrency: number;
  /** Deliveries whose steady-state run is timed alone, for the per-run duration of the cost model. */
  readonly soloSample: number;
  /** Deliveries of the rollout phase (0: none). */
  readonly rolloutMembers: number;
  /** Further rollouts, each over a fleet of its own of this many members, after the first (e.g. 10,000). */
  readonly rolloutMoreMembers?: readonly number[];
  /** Every rollout stops after this many steps (the time at hand); none: all of them. */
  readonly rolloutStopAfter?: number;
  /** The further rollouts (rolloutMoreMembers) stop after this many steps; none: as rolloutStopAfter. */
  readonly rolloutMoreStopAfter?: number;
  /** Whether the plain phases (held, the wave, steady state) run; false: only the rollouts (their figures come from an earlier run). */
  readonly plain?: boolean;
  readonly rolloutMaxParallel: number;
  readonly rolloutSoakMinutes: number;
}

/** What one phase cost. */
export interface Phase {
  readonly runs: number;
  readonly ms: number;
  readonly table: TableUse;
  readonly invocations: number;
  readonly schedulesCreated: number;
  readonly outcomes: Record<string, number>;
  /** Wall time of the handler invocations that reconciled, ms. */
  readonly durations: Durations;
  readonly apiRequests: Record<string, number>;
  /** The most requests each API server had in flight at once (its audit log). */
  readonly peakApiRequests: Record<string, number>;
  /** The most reconciles holding a slot of each cluster at once. */
  readonly peakInFlight: Record<string, number>;
  /** CPU seconds spent: the runs (this process), the API servers and etcd, DynamoDB Local, the registry and ECR endpoint. */
  readonly cpuSeconds: {
    readonly runs: number;
    readonly clusters: number;
    readonly dynamodb: number;
    readonly registry: number;
  };
}

export interface Durations {
  readonly p50: number;
  readonly p90: number;
  readonly max: number;
  /** All the runs' wall times added up, ms (absent from runs recorded before it was kept). */
  readonly total?: number;
}

function durationsOf(values: readonly number[]): Durations {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p90: at(0.9), max: sorted.at(-1) ?? 0, total: values.reduce((a, b) => a + b, 0) };
}

export interface ScaleResult {
  readonly options: ScaleOptions;
  readonly clusters: number;
  /** When and where it ran. */
  readonly machine: {
    readonly date: string;
    readonly cpu: string;
    readonly cores: number;
    readonly load: readonly [number, number];
    readonly totalMs: number;
  };
  readonly held: Phase;
  /** From the gate request until every delivery was Ready. */
  readonly wave: Phase & { readonly readyMs: number; readonly notReady: string[] };
  readonly steady: Phase;
  /** Steady-state runs one at a time: a run's own duration. */
  readonly solo: Phase;
  /** A rollout of three waves over a fleet of its own (absent from runs recorded before it). */
  readonly rollout?: RolloutRun;
  /** The further rollouts (rolloutMoreMembers), each over a fleet of its own. */
  readonly moreRollouts?: readonly RolloutRun[];
}

const GATE = 'release';
const NAMESPACE = 'apps';

/** Flux's benchmark app: a Deployment scaled to zero, its ServiceAccount, a Service and an Ingress. */
export function appFiles(name: string): Record<string, string> {
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      rules: [
        {
          host: `${name}.example.com`,
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name, port: { number: 80 } } } }],
          },
        },
      ],
    },
  };
  return appFile([...podinfoApp(name, NAMESPACE, { replicas: 0, targetPort: 9898 }), ingress]);
}

/** Audit-log lines (API requests) written since `sizes` was taken, per cluster. */
function auditSizes(clusters: readonly LocalCluster[]): Map<string, number> {
  return new Map(clusters.map((c) => [c.name, statSync(c.auditLog).size]));
}
function auditSince(
  clusters: readonly LocalCluster[],
  sizes: Map<string, number>,
): { requests: Record<string, number>; peak: Record<string, number> } {
  const requests: Record<string, number> = {};
  const peak: Record<string, number> = {};
  for (const cluster of clusters) {
    const start = sizes.get(cluster.name)!;
    const length = statSync(cluster.auditLog).size - start;
    const buffer = Buffer.alloc(length);
    const fd = openSync(cluster.auditLog, 'r');
    readSync(fd, buffer, 0, length, start);
    closeSync(fd);
    const lines = buffer.toString('utf8').split('\n').filter(Boolean);
    requests[cluster.name] = lines.length;
    peak[cluster.name] = peakInFlightRequests(lines);
  }
  return { requests, peak };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Retries due within this long are waited for (a busy cluster's); a soak's end is not. */
const SETTLE_HORIZON_MS = 5 * 60_000;

export async function simulate(
  components: Components,
  clusters: readonly LocalCluster[],
  options: ScaleOptions,
  say: (line: string) => void,
  recorded?: ScaleResult,
): Promise<Omit<ScaleResult, 'machine'>> {
  const clusterNames = new Map(
    clusters.map((c) => [clusterSlotsKey(clusterKey({ kubeconfig: c.kubeconfig })), c.name]),
  );
  const inFlight = new InFlight();
  const meter = meteredDynamoDb((pk, change) => inFlight.change(clusterNames.get(pk) ?? pk, change));
  const db = tableClient(meter.client, components.dynamodb.table);
  const clock = simClock();
  const base: ReconcileDeps = {
    ...reconcileDepsFromEnvironment({ runId: 'scale' }),
    db,
    kubectl: components.kubectl,
    clock,
    // What a run could not do (follow its rollout, renew a slot, schedule a retry) is said, not swallowed.
    log: (line) => {
      if (line.startsWith('could not') || line.startsWith("rollout 'fleet")) say(line);
    },
  };
  const resultListeners: ((result: ReconcileResult, startedAt: number) => void)[] = [];
  let outcomes: Record<string, number> = {};
  let durations: number[] = [];
  const readyAt = new Map<string, number>();

  const lambdaOf = (concurrency: number) => {
    const lambda: SimLambda<ReconcileTrigger> = new SimLambda(concurrency, async (event, id) => {
      const deps: ReconcileDeps = {
        ...base,
        runId: `invocation-${id}`,
        retryTimer: scheduler,
        reconcileNow: async (names) => {
          for (const delivery of names) lambda.invoke({ delivery });
        },
      };
      const started = performance.now();
      const startedAt = clock.now().getTime();
      const answer = await reconcileHandler(() => deps)(event, { awsRequestId: `invocation-${id}` });
      if (!Array.isArray(answer)) return;
      durations.push(performance.now() - started);
      for (const result of answer) {
        for (const listener of resultListeners) listener(result, startedAt);
        const key = result.reason === 'ClusterBusy' ? 'ClusterBusy' : result.outcome;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        if (result.outcome === 'Succeeded') readyAt.set(result.delivery, performance.now());
      }
    });
    return lambda;
  };
  let lambda = lambdaOf(options.lambdaConcurrency);
  const scheduler = simScheduler((delivery) => lambda.invoke({ delivery }), 60_000, clock);

  /** Until nothing runs and no retry is pending. */
  const settle = async () => {
    for (;;) {
      await lambda.drained();
      if (scheduler.pendingWithin(SETTLE_HORIZON_MS) === 0) return;
      await sleep(500);
    }
  };
  const phase = async (work: () => Promise<void> | void): Promise<Phase> => {
    meter.take();
    outcomes = {};
    durations = [];
    inFlight.resetPeaks();
    const invocations = lambda.invocations;
    const schedules = scheduler.created();
    const sizes = auditSizes(clusters);
    const cpu = cpuMeter({
      ...Object.fromEntries(clusters.map((c) => [c.name, c.pid])),
      etcd: components.pids.etcd!,
      dynamodb: components.pids.dynamodb!,
      registry: components.pids.registry!,
      ecr: components.pids.ecr!,
    });
    const ownCpu = ownCpuSeconds();
    const started = performance.now();
    await work();
    await settle();
    const ms = performance.now() - started;
    const table = meter.take();
    const spent = cpu.stop();
    const cpuSeconds = {
      runs: ownCpuSeconds() - ownCpu,
      clusters: spent.etcd! + clusters.reduce((sum, c) => sum + spent[c.name]!, 0),
      dynamodb: spent.dynamodb!,
      registry: spent.registry! + spent.ecr!,
    };
    const audit = auditSince(clusters, sizes);
    const runs = Object.values(outcomes).reduce((a, b) => a + b, 0);
    return {
      runs,
      ms,
      table,
      invocations: lambda.invocations - invocations,
      schedulesCreated: scheduler.created() - schedules,
      outcomes,
      durations: durationsOf(durations),
      apiRequests: audit.requests,
      peakApiRequests: audit.peak,
      peakInFlight: Object.fromEntries(inFlight.peak),
      cpuSeconds,
    };
  };

  const plainPhases = async () => {
    const names = Array.from(
      { length: options.deliveries },
      (_, i) => `app-${String(i + 1).padStart(4, '0')}`,
    );
    say(`pushing ${names.length} artifacts of 4 objects (Flux's benchmark shape)`);
    for (const cluster of clusters) {
      const config = new KubeConfig();
      config.loadFromFile(cluster.kubeconfig);
      await config.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
    }
    await pool(
      names.map((name) => () => pushFiles(components, `scale/${name}`, 'v1', appFiles(name))),
      8,
    );
    say(
      `registering gate '${GATE}' (closed) and ${names.length} deliveries over ${clusters.length} clusters`,
    );
    await putGate(db, parseGate({ name: GATE, default: 'closed' }), new Date());
    await pool(
      names.map(
        (name, i) => () =>
          putDelivery(
            db,
            parseDelivery({
              name,
              source: { url: `oci://${components.registry.host}/scale/${name}`, tag: 'v1', provider: 'aws' },
              cluster: { kubeconfig: clusters[i % clusters.length]!.kubeconfig },
              prune: true,
              gates: [{ name: GATE }],
              clusterConcurrency: options.clusterConcurrency,
            }),
            new Date(),
          ),
      ),
      8,
    );

    say('every delivery runs once while the gate is closed (held since Friday)');
    const held = await phase(() => names.forEach((delivery) => lambda.invoke({ delivery })));

    say(`the gate opens: {"gateOpened":"${GATE}"} fans out; Lambda concurrency ${options.lambdaConcurrency}`);
    readyAt.clear();
    let openedAt = 0;
    const wave = await phase(async () => {
      openedAt = performance.now();
      await handleGateEvent(
        { gate: GATE, action: 'open', source: 'cli', requestedBy: 'scale-simulation', reason: 'Monday' },
        { db, clock },
      );
      lambda.invoke({ gateOpened: GATE });
    });
    meter.take();
    const statuses = await Promise.all(names.map((name) => getStatus(db, name)));
    const notReady = names.filter((_, i) => !statuses[i]?.ready);
    const readyMs = Math.max(...[...readyAt.values()]) - openedAt;
    say(
      `every delivery Ready ${(readyMs / 1000).toFixed(1)} s after the gate opened (${notReady.length} not Ready)`,
    );

    say('steady state: one interval run of every delivery, nothing changed');
    const steady = await phase(() => names.forEach((delivery) => lambda.invoke({ delivery })));
    say(`steady state: ${names.length} runs in ${(steady.ms / 1000).toFixed(1)} s`);

    say(`${options.soloSample} steady-state runs one at a time`);
    lambda = lambdaOf(1);
    const solo = await phase(() =>
      names.slice(0, options.soloSample).forEach((delivery) => lambda.invoke({ delivery })),
    );
    meter.take();
    return { held, wave: { ...wave, readyMs, notReady }, steady, solo };
  };
  const plain =
    options.plain === false && recorded
      ? { held: recorded.held, wave: recorded.wave, steady: recorded.steady, solo: recorded.solo }
      : await plainPhases();

  const rollouts: RolloutRun[] = [];
  for (const [index, members] of [options.rolloutMembers, ...(options.rolloutMoreMembers ?? [])].entries()) {
    if (members <= 0) continue;
    const stopAfter =
      index > 0 ? (options.rolloutMoreStopAfter ?? options.rolloutStopAfter) : options.rolloutStopAfter;
    lambda = lambdaOf(options.lambdaConcurrency);
    const harness: Harness = {
      deps: base,
      components,
      clusters,
      clock,
      clusterConcurrency: options.clusterConcurrency,
      say,
      invoke: (event) => lambda.invoke(event),
      phase,
      onResult: (listener) => resultListeners.push(listener),
    };
    const started = performance.now();
    const run = await simulateRollout(harness, {
      members,
      ...(stopAfter !== undefined && { stopAfter }),
      maxParallel: options.rolloutMaxParallel,
      soakMinutes: options.rolloutSoakMinutes,
    });
    rollouts.push({ ...run, wallMs: performance.now() - started });
    resultListeners.length = 0;
  }
  const [rollout, ...moreRollouts] = rollouts;
  return {
    options,
    clusters: clusters.length,
    ...plain,
    ...(rollout && { rollout }),
    ...(moreRollouts.length > 0 && { moreRollouts }),
  };
}

/** The simulation's result with when and where it ran. */
export function withMachine(
  result: Omit<ScaleResult, 'machine'>,
  machine: ScaleResult['machine'],
): ScaleResult {
  return { ...result, machine };
}
