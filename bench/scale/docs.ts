import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { DEFAULTS } from '../../functions/core/config/index.ts';
import { APPLY_CONCURRENCY } from '../../functions/core/kube/pool.ts';
import { table } from '../report.ts';
import { formatMs } from '../stats.ts';
import { withContents } from '../../test/support/markdown-outline.ts';
import { costOfRuns, costPerDeliveryMonth, PRICES, runsPerMonth, total, type PerRun } from './cost.ts';
import { rolloutSection } from './docs-rollout.ts';
import type { Phase, ScaleResult } from './simulate.ts';

/** Flux's published figure for the same shape (fluxcd/flux-benchmark RESULTS.md, Flux v2.6.0). */
const FLUX = {
  ms: 4 * 60_000 + 16_000,
  source: 'https://github.com/fluxcd/flux-benchmark/blob/main/RESULTS.md',
  setup:
    'Flux v2.6.0 on a GitHub-hosted 16-core runner, one Kind cluster (3 nodes), kustomize-controller with 2 CPUs and 20 workers, source-controller with 1 CPU and 10 workers',
};

/** 1,024 MB of Lambda memory is 0.58 of a vCPU (a whole one at 1,769 MB); the local runs had a whole core. */
const CPU_FACTOR = 1769 / 1024;
/** Round trips in a region, which the local components answer faster: DynamoDB, the EKS API server, ECR. */
const RTT_MS = { dynamodb: 5, apiServer: 10, registry: 20 };
/** A steady-state run's registry requests: resolve the tag, then the manifest and the layer. */
const REGISTRY_REQUESTS = 3;
/** Log bytes a run writes: Lambda's START/END/REPORT lines, the `reconciled` line and the metrics (EMF) line. */
const LOG_BYTES = 1_100;
const MEMORY_GB = 1;

const perRun = (phase: Phase, n: number) => n / phase.runs;
export const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);
export const usd = (value: number) => (value >= 0.1 ? `$${value.toFixed(2)}` : `$${value.toFixed(4)}`);

/** A steady-state run's billed Lambda seconds: its local time on a slower CPU, plus the round trips AWS adds. */
export function lambdaSecondsOf(result: ScaleResult): { seconds: number; how: string } {
  const { steady, solo } = result;
  const dynamo = perRun(steady, sum(steady.table.requests));
  const api = perRun(steady, sum(steady.apiRequests));
  const ms =
    solo.durations.p50 * CPU_FACTOR +
    dynamo * RTT_MS.dynamodb +
    api * RTT_MS.apiServer +
    REGISTRY_REQUESTS * RTT_MS.registry;
  const how =
    `${formatMs(solo.durations.p50)} (a run alone, locally) × ${CPU_FACTOR.toFixed(2)} (1,024 MB is 0.58 of a vCPU) + ` +
    `${dynamo.toFixed(1)} DynamoDB requests × ${RTT_MS.dynamodb} ms + ${api.toFixed(1)} API requests × ${RTT_MS.apiServer} ms + ` +
    `${REGISTRY_REQUESTS} registry requests × ${RTT_MS.registry} ms = ${Math.round(ms)} ms`;
  return { seconds: ms / 1000, how };
}

/**
 * A phase's billed Lambda seconds, estimated as a steady run's are: its runs' CPU time (this
 * process) on a slower CPU, plus the round trips AWS adds to its requests. Not the runs' wall
 * time, which 50 runs sharing 2 cores stretch many times over.
 */
export function phaseLambdaSeconds(phase: Phase): number {
  const trips =
    sum(phase.table.requests) * RTT_MS.dynamodb +
    sum(phase.apiRequests) * RTT_MS.apiServer +
    phase.runs * REGISTRY_REQUESTS * RTT_MS.registry;
  return phase.cpuSeconds.runs * CPU_FACTOR + trips / 1000;
}

/** What a phase's runs cost in AWS, in dollars (Lambda, the table, Scheduler). */
export const phaseCost = (phase: Phase): number =>
  total(
    costOfRuns({
      lambdaSeconds: phaseLambdaSeconds(phase),
      memoryGb: MEMORY_GB,
      invocations: phase.invocations,
      readUnits: phase.table.readUnits,
      writeUnits: phase.table.writeUnits,
      schedules: phase.schedulesCreated,
    }),
  );

export function steadyRun(result: ScaleResult): PerRun {
  const { steady } = result;
  return {
    lambdaSeconds: lambdaSecondsOf(result).seconds,
    memoryGb: MEMORY_GB,
    readUnits: perRun(steady, steady.table.readUnits),
    writeUnits: perRun(steady, steady.table.writeUnits),
    busEvents: 0,
    logBytes: LOG_BYTES,
  };
}

const requestsText = (phase: Phase) =>
  Object.entries(phase.table.requests)
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${(n / phase.runs).toFixed(2).replace(/\.00$/, '')} ${op.replace(/Command$/, '')}`)
    .join(', ');

export const peaks = (record: Record<string, number>) => {
  const values = Object.values(record);
  return values.length === 0 ? '—' : `${Math.max(...values)} (each cluster: ${values.join(', ')})`;
};

function phaseRows(result: ScaleResult): string[][] {
  const rows: [string, Phase][] = [
    ['held (gate closed)', result.held],
    ['the wave (gate opened)', result.wave],
    ['steady state', result.steady],
    ['steady state, one at a time', result.solo],
  ];
  return rows.map(([name, p]) => [
    name,
    String(p.runs),
    formatMs(p.ms),
    `${formatMs(p.durations.p50)} / ${formatMs(p.durations.p90)}`,
    (sum(p.table.requests) / p.runs).toFixed(1),
    (p.table.readUnits / p.runs).toFixed(1),
    (p.table.writeUnits / p.runs).toFixed(1),
    (p.schedulesCreated / p.runs).toFixed(2),
    (sum(p.apiRequests) / p.runs).toFixed(1),
    peaks(p.peakInFlight),
    peaks(p.peakApiRequests),
    cpuText(p),
  ]);
}

const PHASE_HEADER = [
  'phase',
  'runs',
  'wall time',
  'run p50 / p90',
  'DynamoDB requests / run',
  'read units / run',
  'write units / run',
  'Scheduler CreateSchedule / run',
  'API requests / run',
  'peak reconciles per cluster',
  'peak API requests in flight per cluster',
  'CPU seconds: runs + API servers and etcd + DynamoDB Local + registry',
];

const cpuTotal = (p: Phase) =>
  p.cpuSeconds.runs + p.cpuSeconds.clusters + p.cpuSeconds.dynamodb + p.cpuSeconds.registry;

/** `120 (40 + 50 + 25 + 5)`, or — for a run recorded without them. */
const cpuText = (p: Phase) =>
  p.cpuSeconds
    ? `${Math.round(cpuTotal(p))} (${[p.cpuSeconds.runs, p.cpuSeconds.clusters, p.cpuSeconds.dynamodb, p.cpuSeconds.registry].map((v) => Math.round(v)).join(' + ')})`
    : '—';

/** The section of docs/benchmarks.md, between markers bench/run.ts keeps. */
export function benchmarkSection(result: ScaleResult): string {
  const { options, wave } = result;
  const n = options.deliveries.toLocaleString('en');
  return [
    SECTION_START,
    `## Scale-out: ${n} deliveries over ${result.clusters} clusters (npm run scale)`,
    '',
    `Written by \`npm run scale\` (bench/scale/), ${result.machine.date}, ${result.machine.cpu}, ${result.machine.cores} cores, load average ${result.machine.load[0].toFixed(1)} at the start and ${result.machine.load[1].toFixed(1)} at the end (other work on the machine counts too); the run took ${(result.machine.totalMs / 60_000).toFixed(1)} min.`,
    '',
    `${n} deliveries of Flux's benchmark app (a Deployment scaled to zero, its ServiceAccount, a Service and an Ingress: 4 objects, each delivery its own artifact) over ${result.clusters} kube-apiservers standing for clusters (one etcd, a prefix each), every delivery held by the gate \`release\` (closed). The gate opens and the reconcile function gets \`{"gateOpened":"release"}\` (what the window-end schedule sends): it looks the deliveries up and invokes itself once per delivery; a stand-in for Lambda's asynchronous queue runs them at most ${options.lambdaConcurrency} at a time (the function's concurrency) against DynamoDB Local, each with \`clusterConcurrency: ${options.clusterConcurrency}\`. Timed from the gate request until the last delivery's status is Ready.`,
    '',
    table(
      ['', 'sluice (this machine)', `Flux (published)`],
      [
        [
          `gate opens → ${n} deliveries Ready`,
          `${formatMs(wave.readyMs)} (${wave.notReady.length} not Ready)`,
          `${formatMs(FLUX.ms)} for ${n} Kustomizations`,
        ],
        [
          'where',
          `2 cores shared by ${result.clusters} API servers, etcd, DynamoDB Local, the registry and the ${options.lambdaConcurrency} runs`,
          FLUX.setup,
        ],
        [
          'concurrency',
          `${options.lambdaConcurrency} invocations, at most ${options.clusterConcurrency} applying per cluster`,
          '20 Kustomizations at a time in one controller',
        ],
      ],
    ),
    '',
    table(PHASE_HEADER, phaseRows(result)),
    '',
    `- What differs from Flux's figure: Flux times one cluster on a 16-core runner from a push of all artifacts (source-controller fetching them counts); here the artifacts were pushed before the gate opened and every delivery was held, so the time is the release wave alone, over ${result.clusters} API servers that share 2 cores with everything else. In AWS each run has its own Lambda instance, and the clusters' API servers their own machines: the local figure is bounded by this machine (see "What bounds us"), not by the design.`,
    ...(wave.cpuSeconds
      ? [
          `- The wave used ${cpuText(wave)} CPU seconds on this machine: on its 2 cores no less than ${formatMs((cpuTotal(wave) / 2) * 1000)} of wall time, whatever the design; the same work spread over 16 cores would need ${formatMs((cpuTotal(wave) / 16) * 1000)}.`,
        ]
      : []),
    `- DynamoDB requests are counted on the wire by an SDK middleware; read and write units are the ConsumedCapacity DynamoDB Local reports for each. API requests are the API servers' audit logs, peak API requests in flight from the same logs (arrival to response). Peak reconciles per cluster: cluster slots held at once.`,
    `- Source: Flux's ${FLUX.source}.`,
    SECTION_END,
  ].join('\n');
}

export const SECTION_START = '<!-- npm run scale: start -->';
export const SECTION_END = '<!-- npm run scale: end -->';

/** The scale section of an existing docs/benchmarks.md, if it has one. */
export function scaleSectionOf(markdown: string): string | undefined {
  const start = markdown.indexOf(SECTION_START);
  const end = markdown.indexOf(SECTION_END);
  return start >= 0 && end > start ? markdown.slice(start, end + SECTION_END.length) : undefined;
}

function costTable(run: PerRun, mode: 'perDelivery' | 'fleet'): string {
  const sizes = [10, 100, 1000];
  const lines = sizes.map((deliveries) =>
    costPerDeliveryMonth(run, { deliveries, intervalMinutes: 5, monitoring: mode }),
  );
  const rows = lines[0]!.map((line, i) => [line.item, ...lines.map((l) => usd(l[i]!.usd))]);
  rows.push(['**per delivery-month**', ...lines.map((l) => `**${usd(total(l))}**`)]);
  rows.push(['installation, a month', ...lines.map((l, i) => usd(total(l) * sizes[i]!))]);
  return table(['', ...sizes.map((s) => `${s.toLocaleString('en')} deliveries`)], rows);
}

/** Whether the goal (under $0.10 a delivery-month at steady state) holds, and where. */
function goalText(run: PerRun, halfMemory: PerRun): string {
  const at1000 = (r: PerRun, monitoring: 'fleet' | 'perDelivery') =>
    total(costPerDeliveryMonth(r, { deliveries: 1000, intervalMinutes: 5, monitoring }));
  const [fleet, half, perDelivery] = [
    at1000(run, 'fleet'),
    at1000(halfMemory, 'fleet'),
    at1000(run, 'perDelivery'),
  ];
  const verdict = (v: number) => (v < 0.1 ? 'holds' : 'is missed');
  return (
    `**The goal, under $0.10 a delivery-month at steady state: at 1,000 deliveries with \`monitoring: 'fleet'\` it ${verdict(fleet)} (${usd(fleet)} at the default 1,024 MB; ${usd(half)} at 512 MB); with per-delivery monitoring it is missed (${usd(perDelivery)})**: three alarms and two custom metrics for each delivery are $0.90 of CloudWatch a month by themselves, more than everything else together. ` +
    "Per-delivery alarms suit tens of deliveries; at hundreds, `monitoring: 'fleet'` has three alarms for all of them, and the logs and `sluice status` say which delivery. At 10 deliveries the fixed alarms (the functions' and the failure queue's) dominate either way. " +
    'The largest remaining item is Lambda time, and it is an estimate (above), not a measurement on Lambda.'
  );
}

/** docs/scale.md: how sluice scales out, the measured figures and the cost model. */
export function scaleDoc(result: ScaleResult): string {
  const run = steadyRun(result);
  const { steady } = result;
  const halfMemory: PerRun = { ...run, memoryGb: 0.5, lambdaSeconds: run.lambdaSeconds * 1.5 };
  const priceRows = Object.values(PRICES).map((p) => [
    p.per,
    `$${p.usd < 0.001 ? p.usd.toExponential(4) : p.usd}`,
    p.url,
  ]);
  return [
    '# sluice at scale',
    '',
    '<!-- Written by `npm run scale` (bench/scale/docs.ts) from its last run; edit bench/scale/, not this file. -->',
    '',
    'A single controller reconciles its deliveries with a fixed number of workers; sluice is Lambda invocations, so it',
    'scales by running more of them. What keeps that from turning into a thundering herd:',
    '',
    '- **Fan-out.** An event that concerns several deliveries (an ECR push of an artifact twenty deliveries use, a gate',
    '  that opens on Monday with everything held since Friday) is not worked through in one invocation: the reconcile',
    '  function invokes itself asynchronously once per delivery (`InvocationType: Event`, 50 requests in flight), each',
    "  with its own 15 minutes, Lambda's retries and the failure queue as on-failure destination. An event that concerns",
    '  one delivery is reconciled where it arrives. The gate function fans out the same way.',
    '- **Lookups, not scans.** The deliveries of a repository, of a gate and of a dependency are index items in the table',
    "  (`lookup#repository#…`, `lookup#gate#…`, `lookup#depends-on#…`), written in the same transaction as the delivery's",
    '  spec (register, CDK create and update) and removed before it (unregister, CDK delete): one Query answers a push',
    '  or a gate opening however many deliveries there are.',
    "- **Spread.** Each interval schedule has a flexible time window of its interval (Scheduler's `FLEXIBLE` mode), so",
    '  a thousand deliveries of a 5-minute interval deployed together arrive over 5 minutes, not in the same second.',
    '- **A limit per cluster.** At most `clusterConcurrency` reconciles apply to one cluster at once: a slot per',
    '  reconcile, taken with a conditional write in the table before its first dry-run or write (a run that finds',
    '  nothing to change has only read a few lists, and takes none), renewed while held,',
    "  free again when a crashed run's time runs out (2 minutes). A run that finds no free slot in 20 seconds changes",
    '  nothing, records `ClusterBusy` (naming the cluster and the limit) and is retried 30 s to 2.5 min later.',
    '',
    `## Why ${DEFAULTS.clusterConcurrency} reconciles per cluster`,
    '',
    "EKS keeps the upstream API server in-flight limits (`--max-requests-inflight` 400, `--max-mutating-requests-inflight` 200: 600 seats per API server, raised as EKS scales the control plane up). API Priority and Fairness divides them by the priority levels' nominal shares (exempt aside): system 30, node-high 40, leader-election 10, workload-high 40, workload-low 100, global-default 20, catch-all 5. sluice's role is neither a node nor a service account, so its requests fall in `global-default`: 600 × 20 / 245 = 49 seats, and since that level tells flows apart by user, all of sluice is one flow, queued in 6 of 128 queues of 50. " +
      `One reconcile keeps up to ${APPLY_CONCURRENCY} requests in flight; ${DEFAULTS.clusterConcurrency} reconciles are ${DEFAULTS.clusterConcurrency * APPLY_CONCURRENCY}, within the 49 + 300 that level holds for one flow before it answers 429, with room for the level's other users. The simulation below never had more than ${Math.max(...Object.values(result.wave.peakApiRequests))} requests in flight at one API server.`,
    '',
    'Sources: [EKS best practices, control plane](https://aws.github.io/aws-eks-best-practices/scalability/docs/control-plane/), [API Priority and Fairness](https://kubernetes.io/docs/concepts/cluster-administration/flow-control/), the suggested priority levels in k8s.io/apiserver `pkg/apis/flowcontrol/bootstrap/default.go`.',
    '',
    '## Measured',
    '',
    `\`npm run scale\` (figures in [benchmarks.md](benchmarks.md#scale-out-${result.options.deliveries}-deliveries-over-${result.clusters}-clusters-npm-run-scale), raw in bench/scale/last-run.json): ${result.options.deliveries.toLocaleString('en')} deliveries of 4 objects over ${result.clusters} local API servers, Lambda concurrency ${result.options.lambdaConcurrency}, \`clusterConcurrency: ${result.options.clusterConcurrency}\`.`,
    '',
    table(PHASE_HEADER, phaseRows(result)),
    '',
    `DynamoDB requests of a steady-state run: ${requestsText(steady)}. Its writes: the lease taken and given back, the status; no event (a run that changed nothing records none) and no cluster slot (a run takes one only when it has something to write). Its reads: the spec (twice: before and under the lease), the lease, the status, the gate and its last request, the inventory. Scheduler: one invocation per interval run (the schedule), and a one-time schedule only for a retry.`,
    '',
    ...rolloutSection(result),
    '## Cost model',
    '',
    `Prices: AWS list prices for **us-east-1** as published on AWS's pricing pages in 2025 (DynamoDB's after the November 2024 on-demand cut), taken as unchanged on ${result.machine.date.slice(0, 10)}, the date of this run; free tiers are not counted (Lambda's 400,000 GB-s and 1 million requests, Scheduler's 14 million invocations a month would make small installations cheaper still).`,
    '',
    table(['price of', 'USD', 'page'], priceRows),
    '',
    'A steady-state run (a 5-minute interval, nothing changed; ' +
      runsPerMonth(5).toLocaleString('en') +
      ' runs a month, 730 hours):',
    '',
    table(
      ['', 'per run', 'from'],
      [
        [
          'Lambda billed duration at 1,024 MB',
          `${Math.round(run.lambdaSeconds * 1000)} ms`,
          lambdaSecondsOf(result).how,
        ],
        ['DynamoDB read units', run.readUnits.toFixed(2), 'measured (ConsumedCapacity)'],
        ['DynamoDB write units', run.writeUnits.toFixed(2), 'measured (ConsumedCapacity)'],
        ['Scheduler invocations', '1', 'the interval schedule'],
        ['events on a bus', '0', 'a run that changed nothing publishes none'],
        [
          'log bytes',
          String(run.logBytes),
          "Lambda's START/END/REPORT lines, the `reconciled` line, the EMF metrics line",
        ],
      ],
    ),
    '',
    "### With `monitoring: 'fleet'`",
    '',
    costTable(run, 'fleet'),
    '',
    '### With per-delivery monitoring (the default)',
    '',
    costTable(run, 'perDelivery'),
    '',
    '### With `reconcileMemorySize: 512` and fleet monitoring (half the memory, assumed 1.5× the time)',
    '',
    costTable(halfMemory, 'fleet'),
    '',
    goalText(run, halfMemory),
    '',
    "What the model leaves out: the EKS and ECR side (clusters, storage, data transfer), DynamoDB storage (a delivery's items are a few KB; events only when something changes) and point-in-time recovery, SQS (only failures), the gate and spec functions (a few invocations a day), KMS for a customer managed key, and cold starts (a warm function serves most 5-minute runs; since August 2025 Lambda bills the init phase too). Runs that apply changes cost more than steady-state ones: the wave's runs above used about " +
      `${(result.wave.table.writeUnits / result.wave.runs).toFixed(0)} write units each against ${run.writeUnits.toFixed(0)}.`,
    '',
  ].join('\n');
}

/** Writes the section of docs/benchmarks.md and docs/scale.md. */
export async function writeScaleDocs(root: string, result: ScaleResult): Promise<void> {
  const benchmarks = join(root, 'docs', 'benchmarks.md');
  const before = existsSync(benchmarks) ? readFileSync(benchmarks, 'utf8') : '# Benchmarks\n';
  const section = benchmarkSection(result);
  const old = scaleSectionOf(before);
  const updated = withContents(old ? before.replace(old, section) : `${before.trimEnd()}\n\n${section}\n`);
  for (const [file, text] of [
    [benchmarks, updated],
    [join(root, 'docs', 'scale.md'), withContents(scaleDoc(result))],
  ] as const) {
    writeFileSync(file, await format(text, { ...(await resolveConfig(file)), filepath: file }));
  }
}
