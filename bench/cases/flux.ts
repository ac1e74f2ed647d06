import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appFile, podinfoApp, pool } from '../apps.ts';
import { auditWindow, isWrite, type AuditedRequest } from '../audit.ts';
import { deliver, reconcileOrFail, type BenchContext } from '../context.ts';
import { cpuMeter, ownCpuSeconds } from '../cpu.ts';
import { pushFiles, registerDelivery } from '../delivery.ts';
import {
  FLUX_CONCURRENCY,
  isFluxRequest,
  peakRss,
  startFlux,
  type FluxControllers,
} from '../flux/controllers.ts';
import { FLUX_CONTROLLERS_VERSION, fluxBinaries } from '../flux/provision.ts';
import { fluxDeliveryYaml, requestReconcile, waitForKustomizations } from '../flux/resources.ts';
import { kubectl } from '../kubectl.ts';
import { mixFiles } from '../mix.ts';
import type { BenchOutcome, TargetCheck } from '../report.ts';
import { formatBytes, formatMs, formatRatio } from '../stats.ts';
import { APPLY_COUNT } from './apply.ts';
import { PRUNE_COUNT } from './prune.ts';

/** Deliveries of the many-small-deliveries case (Flux's own MTTP shape), 4 objects each. */
const SMALL_DELIVERIES = Number(process.env.SLUICE_BENCH_FLUX_DELIVERIES ?? 100);

/** What one side spent on one case. */
interface Cost {
  readonly ms: number;
  readonly requests: readonly AuditedRequest[];
  readonly writes: number;
  /** kube-apiserver + etcd CPU seconds. */
  readonly serverCpu: number;
  /** The client's CPU seconds: this process for sluice, the two controllers for Flux. */
  readonly clientCpu: number;
}

interface Case {
  readonly name: string;
  readonly sluice: Cost;
  readonly flux: Cost;
}

const KUBECTL = /^kubectl\//;

/** Times `work` and counts what one side made the API server do, telling the sides apart by user agent. */
async function cost(
  ctx: BenchContext,
  side: 'sluice' | 'flux',
  flux: FluxControllers,
  work: () => Promise<unknown>,
): Promise<Cost> {
  const { components } = ctx;
  const audit = auditWindow(components);
  const cpu = cpuMeter({
    apiserver: components.pids.kubeApiserver!,
    etcd: components.pids.etcd!,
    source: flux.pids.sourceController,
    kustomize: flux.pids.kustomizeController,
  });
  const own = ownCpuSeconds();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const ownCpu = ownCpuSeconds() - own;
  const spent = cpu.stop();
  const requests = audit
    .stop()
    .filter((r) =>
      side === 'flux'
        ? isFluxRequest(r.userAgent)
        : !isFluxRequest(r.userAgent) && !KUBECTL.test(r.userAgent),
    );
  return {
    ms,
    requests,
    writes: requests.filter(isWrite).length,
    serverCpu: spent.apiserver! + spent.etcd!,
    clientCpu: side === 'flux' ? spent.source! + spent.kustomize! : ownCpu,
  };
}

/** Four objects of one small delivery, in `namespace`. */
function smallDeliveryFiles(namespace: string, name: string): Record<string, string> {
  const [account, deployment, service] = podinfoApp(name, namespace, { replicas: 1, targetPort: 8080 });
  const config = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: name } },
    data: { greeting: 'hello' },
  };
  return appFile([account, config, service, deployment]);
}

/**
 * sluice and Flux side by side on the same API server in the same run: Flux's source-controller and
 * kustomize-controller built from Go modules, running out of cluster, with an OCIRepository and a
 * Kustomization (`prune: true`) per delivery.
 */
export async function fluxBench(ctx: BenchContext, say: (line: string) => void): Promise<BenchOutcome> {
  const binaries = fluxBinaries(say);
  const flux = await startFlux(ctx.components, binaries, ctx.tempDir('flux'), ctx.kubectlCache);
  try {
    return await compare(ctx, flux, say);
  } finally {
    await flux.stop();
  }
}

async function compare(
  ctx: BenchContext,
  flux: FluxControllers,
  say: (line: string) => void,
): Promise<BenchOutcome> {
  const { components } = ctx;
  const run = (args: string[]) => kubectl(components, args, ctx.kubectlCache);
  const applyFlux = async (yaml: string) => {
    const file = join(ctx.tempDir('flux-objects'), 'flux.yaml');
    writeFileSync(file, yaml);
    await run(['apply', '-f', file]);
  };
  const cases: Case[] = [];

  say(`flux (a): push → applied, ${APPLY_COUNT.toLocaleString('en')} objects`);
  const sluiceDelivery = 'flux-vs-sluice';
  const sluiceRepository = 'bench/flux-vs-sluice';
  const fluxName = 'flux-vs-flux';
  const fluxRepository = 'bench/flux-vs-flux';
  const sluiceApply = await cost(ctx, 'sluice', flux, async () => {
    await deliver(ctx, sluiceDelivery, sluiceRepository, mixFiles({ count: APPLY_COUNT, prefix: 'fs' }));
    await reconcileOrFail(ctx, sluiceDelivery);
  });
  const fluxApply = await cost(ctx, 'flux', flux, async () => {
    const digest = await pushFiles(
      components,
      fluxRepository,
      'main',
      mixFiles({ count: APPLY_COUNT, prefix: 'ff' }),
    );
    await applyFlux(fluxDeliveryYaml(components, flux, fluxName, fluxRepository));
    await waitForKustomizations(components, flux, new Map([[fluxName, { digest }]]));
  });
  cases.push({
    name: `(a) push → applied, ${APPLY_COUNT.toLocaleString('en')} new objects`,
    sluice: sluiceApply,
    flux: fluxApply,
  });

  say('flux (c): steady state, nothing changed');
  const sluiceSteady = await cost(ctx, 'sluice', flux, () => reconcileOrFail(ctx, sluiceDelivery));
  const fluxSteady = await cost(ctx, 'flux', flux, async () => {
    const handled = await requestReconcile(components, flux, [fluxName], ctx.kubectlCache);
    await waitForKustomizations(components, flux, new Map([[fluxName, { handled }]]));
  });
  cases.push({
    name: `(c) steady state: one interval, ${APPLY_COUNT.toLocaleString('en')} objects unchanged`,
    sluice: sluiceSteady,
    flux: fluxSteady,
  });

  say(`flux (d): prune ${PRUNE_COUNT}`);
  const kept = APPLY_COUNT - PRUNE_COUNT;
  const sluicePrune = await cost(ctx, 'sluice', flux, async () => {
    await pushFiles(
      components,
      sluiceRepository,
      'main',
      mixFiles({ count: kept, prefix: 'fs', revision: 2 }),
    );
    await reconcileOrFail(ctx, sluiceDelivery);
  });
  const fluxPrune = await cost(ctx, 'flux', flux, async () => {
    const digest = await pushFiles(
      components,
      fluxRepository,
      'main',
      mixFiles({ count: kept, prefix: 'ff', revision: 2 }),
    );
    await requestReconcile(components, flux, [fluxName], ctx.kubectlCache);
    await waitForKustomizations(components, flux, new Map([[fluxName, { digest }]]));
  });
  cases.push({ name: `(d) push → pruned, ${PRUNE_COUNT} objects`, sluice: sluicePrune, flux: fluxPrune });

  say(`flux (b): ${SMALL_DELIVERIES} deliveries of 4 objects, all at once`);
  await run(['create', 'namespace', 'small-sluice']);
  await run(['create', 'namespace', 'small-flux']);
  const names = Array.from({ length: SMALL_DELIVERIES }, (_, i) => `small-${String(i).padStart(4, '0')}`);
  const digests = new Map<string, string>();
  await pool(
    names.map((name) => async () => {
      await pushFiles(components, `bench/sluice-${name}`, 'main', smallDeliveryFiles('small-sluice', name));
      await registerDelivery(ctx.deps, components, `sluice-${name}`, `bench/sluice-${name}`);
      digests.set(
        name,
        await pushFiles(components, `bench/flux-${name}`, 'main', smallDeliveryFiles('small-flux', name)),
      );
    }),
    8,
  );
  const sluiceMany = await cost(ctx, 'sluice', flux, () =>
    pool(
      names.map((name) => () => reconcileOrFail(ctx, `sluice-${name}`)),
      FLUX_CONCURRENCY,
    ),
  );
  const fluxMany = await cost(ctx, 'flux', flux, async () => {
    await applyFlux(
      names.map((name) => fluxDeliveryYaml(components, flux, name, `bench/flux-${name}`)).join('---\n'),
    );
    await waitForKustomizations(
      components,
      flux,
      new Map(names.map((name) => [name, { digest: digests.get(name)! }])),
    );
  });
  cases.push({
    name: `(b) ${SMALL_DELIVERIES} deliveries of 4 objects, all at once`,
    sluice: sluiceMany,
    flux: fluxMany,
  });

  const fluxRss = peakRss(flux.pids.sourceController) + peakRss(flux.pids.kustomizeController);
  return outcome(cases, fluxRss);
}

function outcome(cases: readonly Case[], fluxRss: number): BenchOutcome {
  const targets: TargetCheck[] = cases.map((c) => ({
    benchmark: `F${c.name}: time, sluice vs Flux`,
    sluice: formatMs(c.sluice.ms),
    reference: `${formatMs(c.flux.ms)} (Flux ${FLUX_CONTROLLERS_VERSION})`,
    ratio: `${formatRatio(c.flux.ms / c.sluice.ms)} ${c.sluice.ms <= c.flux.ms ? 'faster' : 'slower'}`,
    target: 'faster than Flux',
    holds: c.sluice.ms < c.flux.ms,
  }));
  const steady = cases.find((c) => c.name.startsWith('(c)'))!;
  targets.push({
    benchmark: 'F(c) steady state: API requests per interval, sluice vs Flux',
    sluice: `${steady.sluice.requests.length} requests, ${steady.sluice.writes} writes`,
    reference: `${steady.flux.requests.length} requests, ${steady.flux.writes} writes (Flux)`,
    ratio: `${formatRatio(steady.flux.requests.length / Math.max(1, steady.sluice.requests.length))} fewer`,
    target: 'fewer API requests than Flux',
    holds: steady.sluice.requests.length < steady.flux.requests.length,
  });
  const row = (c: Case, side: 'sluice' | 'flux') => {
    const cost = c[side];
    return [
      c.name,
      side === 'sluice' ? 'sluice' : `Flux ${FLUX_CONTROLLERS_VERSION}`,
      formatMs(cost.ms),
      String(cost.requests.length),
      String(cost.writes),
      `${cost.serverCpu.toFixed(2)} s`,
      `${cost.clientCpu.toFixed(2)} s`,
    ];
  };
  return {
    targets,
    sections: [
      {
        title: `Flux side by side (source-controller and kustomize-controller ${FLUX_CONTROLLERS_VERSION})`,
        method:
          `Flux's controllers are built from Go modules (bench/flux/build-flux.sh) and run out of cluster against the same kube-apiserver, ` +
          `artifact storage on 127.0.0.1, leader election off, ${FLUX_CONCURRENCY} workers each (\`--concurrent\`); each delivery is an OCIRepository ` +
          `on the same local registry (insecure, a docker-config Secret) and a Kustomization with \`prune: true\`, intervals of an hour so only the ` +
          `reconciles the bench asks for run (the \`reconcile.fluxcd.io/requestedAt\` annotation, what \`flux reconcile --with-source\` sets). ` +
          `The same objects under other names for each side. Times run from the push (included) until the Kustomization is Ready at the new ` +
          `digest, polled every 100 ms; for sluice until the in-process reconcile returns. Requests are the audit log's, told apart by user agent ` +
          `(the bench's own kubectl and polling excluded). Client CPU is this process's for sluice, the two controllers' for Flux. ` +
          `In (b) sluice runs ${FLUX_CONCURRENCY} reconciles at a time in one process, as ${FLUX_CONCURRENCY} concurrent Lambda invocations would.`,
        table: {
          header: ['case', 'who', 'time', 'API requests', 'writes', 'API server + etcd CPU', 'client CPU'],
          rows: cases.flatMap((c) => [row(c, 'sluice'), row(c, 'flux')]),
        },
        notes: [
          `Flux's controllers' peak resident memory after all cases: ${formatBytes(fluxRss)} (source-controller + kustomize-controller, VmHWM); sluice's reconcile of 5,000 objects peaks as benchmark 6 says, in a function that exists only while it runs.`,
          `Steady state, Flux: ${byVerb(steady.flux.requests)}. kustomize-controller dry-runs a server-side apply of every object each interval to find drift (and reads each back), where sluice lists the delivery's own objects by label, one list per kind, and compares them with the hashes it recorded.`,
          `Steady state, sluice: ${byVerb(steady.sluice.requests)}.`,
          'Where Flux comes close, (b): 100 small deliveries are dominated by fixed costs per delivery (the OCI pull, discovery, the status writes), and sluice runs them in this one 2-core process; in AWS each is its own Lambda invocation.',
        ],
      },
    ],
  };
}

/** `2000 × patch (dry-run), 30 × get, …`: requests by verb, most frequent first. */
function byVerb(requests: readonly AuditedRequest[]): string {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const key = `${r.verb}${!isWrite(r) && /[?&]dryRun=/.test(r.uri) ? ' (dry-run)' : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${n} × ${key}`)
    .join(', ');
}
