import { appFile, podinfoApp, pool } from '../apps.ts';
import { auditWindow, isWrite, type AuditedRequest } from '../audit.ts';
import { reconcileOrFail, type BenchContext } from '../context.ts';
import { cpuMeter, ownCpuSeconds } from '../cpu.ts';
import { engineDeps, pushFiles, registerDelivery } from '../delivery.ts';
import { FluxApi, handled, readyAt, type FluxWatch } from '../flux/api.ts';
import {
  FLUX_CONCURRENCY,
  FLUX_NAMESPACE,
  isFluxRequest,
  peakRss,
  startFlux,
  type FluxControllers,
} from '../flux/controllers.ts';
import { inAlternatingOrder, type PairedCase, type Sample } from '../flux/pairs.ts';
import { fluxBinaries } from '../flux/provision.ts';
import { fluxDeliveryObjects } from '../flux/resources.ts';
import { kubectl } from '../kubectl.ts';
import { mixFiles } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { APPLY_COUNT } from './apply.ts';
import { fluxOutcome } from './flux-report.ts';
import { PRUNE_COUNT } from './prune.ts';

/** Pairs per case: each a sluice and a Flux measurement, one right after the other. */
const PAIRS = Number(process.env.SLUICE_BENCH_FLUX_PAIRS ?? 5);
/** Deliveries of the many-small-deliveries case (Flux's own MTTP shape), 4 objects each. */
const SMALL_DELIVERIES = Number(process.env.SLUICE_BENCH_FLUX_DELIVERIES ?? 100);

const KUBECTL = /^kubectl\//;
/** Flux's own kinds: only the bench (its watches, its triggers) asks for them on sluice's side. */
const FLUX_API = /^\/apis\/(source|kustomize)\.toolkit\.fluxcd\.io\//;

/** What the two sides share in a run: the components, Flux's controllers, the bench's Flux client and watches. */
interface Bed {
  readonly ctx: BenchContext;
  flux: FluxControllers;
  readonly api: FluxApi;
  readonly sources: FluxWatch;
  readonly kustomizations: FluxWatch;
}

/**
 * Times `work` and counts what one side made the API server do, telling the sides apart by user
 * agent (the bench's own kubectl and Flux client excluded: they run outside the windows).
 */
async function measure(bed: Bed, side: 'sluice' | 'flux', work: () => Promise<unknown>): Promise<Sample> {
  const { components } = bed.ctx;
  // Both sides start from rest: no Flux reconcile left over from setup or the other side's window.
  await bed.flux.idle();
  const audit = auditWindow(components);
  const cpu = cpuMeter({
    apiserver: components.pids.kubeApiserver!,
    etcd: components.pids.etcd!,
    dynamodb: components.pids.dynamodb!,
    source: bed.flux.pids.sourceController,
    kustomize: bed.flux.pids.kustomizeController,
  });
  const own = ownCpuSeconds();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const ownCpu = ownCpuSeconds() - own;
  const spent = cpu.stop();
  const requests = audit
    .stop()
    .filter((r: AuditedRequest) =>
      side === 'flux'
        ? isFluxRequest(r.userAgent)
        : !isFluxRequest(r.userAgent) && !KUBECTL.test(r.userAgent) && !FLUX_API.test(r.uri),
    );
  return {
    ms,
    requests: requests.length,
    writes: requests.filter(isWrite).length,
    serverCpu: spent.apiserver! + spent.etcd!,
    clientCpu: side === 'flux' ? spent.source! + spent.kustomize! : ownCpu + spent.dynamodb!,
  };
}

/** Four objects of one small delivery, in `namespace`; `revision` changes the ConfigMap's data. */
function smallDeliveryFiles(namespace: string, name: string, revision: number): Record<string, string> {
  const [account, deployment, service] = podinfoApp(name, namespace, { replicas: 1, targetPort: 8080 });
  const config = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: name } },
    data: { greeting: `hello ${revision}` },
  };
  return appFile([account, config, service, deployment]);
}

/** The first revision of a large delivery: one ConfigMap, applied untimed as each side's warm-up. */
const warmFiles = (name: string) =>
  appFile([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: {} }]);

/**
 * sluice and Flux side by side on the same API server in the same run: Flux's source-controller and
 * kustomize-controller built from Go modules, running out of cluster, with an OCIRepository and a
 * Kustomization (`prune: true`) per delivery. Every case is measured in pairs, in alternating order.
 */
export async function fluxBench(ctx: BenchContext, say: (line: string) => void): Promise<BenchOutcome> {
  const binaries = fluxBinaries(say);
  const flux = await startFlux(ctx.components, binaries, ctx.tempDir('flux'), ctx.kubectlCache);
  const api = new FluxApi(ctx.components, FLUX_NAMESPACE);
  const bed: Bed = {
    ctx,
    flux,
    api,
    sources: await api.watch('OCIRepository'),
    kustomizations: await api.watch('Kustomization'),
  };
  try {
    const cases = await largeDeliveryCases(bed, say);
    const small = await setUpSmallDeliveries(bed, say);
    cases.push(await small.measurePairs(FLUX_CONCURRENCY));
    const fluxRss = peakRss(bed.flux.pids.sourceController) + peakRss(bed.flux.pids.kustomizeController);
    say('flux (b) again, Flux at its default workers');
    await bed.flux.stop();
    bed.flux = await bed.flux.restart(undefined);
    // Restarted, Flux reconciles every object once: its warm-up at its defaults, untimed.
    await bed.flux.idle();
    cases.push(await small.measurePairs(undefined));
    return fluxOutcome(cases, { fluxRss, pairs: PAIRS });
  } finally {
    bed.sources.stop();
    bed.kustomizations.stop();
    api.close();
    await bed.flux.stop();
  }
}

/**
 * (a) push → applied, (c) steady state, (d) push → pruned: in each pair a new delivery per side,
 * warmed up with a one-object revision, then 1,000 new objects, then nothing changed, then half gone.
 * Pushes happen before each window: both sides start from an artifact already in the registry.
 */
async function largeDeliveryCases(bed: Bed, say: (line: string) => void): Promise<PairedCase[]> {
  const { ctx } = bed;
  const { components } = ctx;
  const apply: { sluice: Sample; flux: Sample }[] = [];
  const steady: typeof apply = [];
  const prune: typeof apply = [];
  for (let p = 0; p < PAIRS; p++) {
    const sluiceName = `fa-s${p}`;
    const fluxName = `fa-f${p}`;
    await registerDelivery(ctx.deps, components, sluiceName, `bench/${sluiceName}`);
    await pushFiles(components, `bench/${sluiceName}`, 'main', warmFiles(sluiceName));
    await reconcileOrFail(ctx, sluiceName);
    const warm = await pushFiles(components, `bench/${fluxName}`, 'main', warmFiles(fluxName));
    await bed.api.apply(fluxDeliveryObjects(components, bed.flux, fluxName, `bench/${fluxName}`));
    await bed.kustomizations.until([fluxName], readyAt(warm));

    const push = (name: string, files: Record<string, string>) =>
      pushFiles(components, `bench/${name}`, 'main', files);
    const sluiceRun = () => measure(bed, 'sluice', () => reconcileOrFail(ctx, sluiceName));
    const fluxRun = (digest: string) => () =>
      measure(bed, 'flux', () => pushed(bed, [fluxName], () => digest));

    say(`flux (a) pair ${p + 1}/${PAIRS}: push → applied, ${APPLY_COUNT.toLocaleString('en')} objects`);
    await push(sluiceName, mixFiles({ count: APPLY_COUNT, prefix: `fxs${p}` }));
    let digest = await push(fluxName, mixFiles({ count: APPLY_COUNT, prefix: `fxf${p}` }));
    apply.push(await inAlternatingOrder(p, sluiceRun, fluxRun(digest)));

    say(`flux (c) pair ${p + 1}/${PAIRS}: steady state`);
    steady.push(
      await inAlternatingOrder(p, sluiceRun, () =>
        measure(bed, 'flux', () => reconcileWithSource(bed, fluxName)),
      ),
    );

    say(`flux (d) pair ${p + 1}/${PAIRS}: push → pruned, ${PRUNE_COUNT} objects`);
    const kept = APPLY_COUNT - PRUNE_COUNT;
    await push(sluiceName, mixFiles({ count: kept, prefix: `fxs${p}`, revision: 2 }));
    digest = await push(fluxName, mixFiles({ count: kept, prefix: `fxf${p}`, revision: 2 }));
    prune.push(await inAlternatingOrder(p, sluiceRun, fluxRun(digest)));
  }
  const paired = (name: string, samples: { sluice: Sample; flux: Sample }[]): PairedCase => ({
    name,
    sluice: samples.map((s) => s.sluice),
    flux: samples.map((s) => s.flux),
    fluxWorkers: `${FLUX_CONCURRENCY}`,
  });
  return [
    paired(`(a) push → applied, ${APPLY_COUNT.toLocaleString('en')} new objects`, apply),
    paired(`(c) steady state: one interval, ${APPLY_COUNT.toLocaleString('en')} objects unchanged`, steady),
    paired(`(d) push → pruned, ${PRUNE_COUNT} objects`, prune),
  ];
}

/**
 * What a push webhook (Flux's Receiver) does: only the OCIRepositories are asked to reconcile; each
 * Kustomization follows when its source's artifact changes. Waits until every one is Ready at its digest.
 */
async function pushed(bed: Bed, names: readonly string[], digestOf: (name: string) => string): Promise<void> {
  await bed.api.requestReconcile('OCIRepository', names, new Date().toISOString());
  await bed.kustomizations.until(names, (object) => readyAt(digestOf(object.metadata.name))(object));
}

/**
 * What `flux reconcile kustomization --with-source` does: the source reconciles and is waited for,
 * then the Kustomization (cmd/flux/reconcile_with_source.go).
 */
async function reconcileWithSource(bed: Bed, name: string): Promise<void> {
  const at = new Date().toISOString();
  await bed.api.requestReconcile('OCIRepository', [name], at);
  await bed.sources.until([name], handled(at));
  await bed.api.requestReconcile('Kustomization', [name], at);
  await bed.kustomizations.until([name], handled(at));
}

/** The deliveries of (b), set up once: each run of pairs gives all of them their next revision. */
interface SmallDeliveries {
  measurePairs(fluxWorkers: number | undefined): Promise<PairedCase>;
}

/**
 * (b) many small deliveries, each given a new revision at once: set up once (every delivery
 * applied at its first revision, untimed: the warm-up), then in each pair all of them get the next
 * revision. sluice runs FLUX_CONCURRENCY reconciles at a time in this process, each in its own warm
 * container's dependencies, as that many concurrent Lambda invocations would.
 */
async function setUpSmallDeliveries(bed: Bed, say: (line: string) => void): Promise<SmallDeliveries> {
  const { ctx } = bed;
  const { components } = ctx;
  const names = Array.from({ length: SMALL_DELIVERIES }, (_, i) => `small-${String(i).padStart(3, '0')}`);
  const sluiceNs = 'small-sluice';
  const fluxNs = 'small-flux';
  for (const namespace of [sluiceNs, fluxNs])
    await kubectl(components, ['create', 'namespace', namespace], ctx.kubectlCache);
  const digests = new Map<string, string>();
  const pushAll = (revision: number) =>
    pool(
      names.map((name) => async () => {
        await pushFiles(
          components,
          `bench/sluice-${name}`,
          'main',
          smallDeliveryFiles(sluiceNs, name, revision),
        );
        digests.set(
          `flux-${name}`,
          await pushFiles(
            components,
            `bench/flux-${name}`,
            'main',
            smallDeliveryFiles(fluxNs, name, revision),
          ),
        );
      }),
      8,
    );
  const sluiceNames = names.map((name) => `sluice-${name}`);
  const fluxNames = names.map((name) => `flux-${name}`);
  // One warm container per concurrent invocation, each taking the next delivery when it is done.
  const containers = Array.from({ length: FLUX_CONCURRENCY }, () => ({
    ...ctx,
    deps: engineDeps(components),
  }));
  const reconcileAll = async () => {
    let next = 0;
    await Promise.all(
      containers.map(async (container) => {
        while (next < sluiceNames.length) await reconcileOrFail(container, sluiceNames[next++]!);
      }),
    );
  };

  say(`flux (b) ${SMALL_DELIVERIES} deliveries: first revision, untimed`);
  let revision = 1;
  await pushAll(revision);
  await pool(
    sluiceNames.map((name) => () => registerDelivery(ctx.deps, components, name, `bench/${name}`)),
    8,
  );
  await reconcileAll();
  await bed.api.apply(
    fluxNames.flatMap((name) => fluxDeliveryObjects(components, bed.flux, name, `bench/${name}`)),
  );
  await bed.kustomizations.until(fluxNames, (object) => readyAt(digests.get(object.metadata.name)!)(object));

  return {
    async measurePairs(fluxWorkers) {
      const samples: { sluice: Sample; flux: Sample }[] = [];
      for (let p = 0; p < PAIRS; p++) {
        say(`flux (b) pair ${p + 1}/${PAIRS}: ${SMALL_DELIVERIES} deliveries, a new revision each`);
        await pushAll(++revision);
        samples.push(
          await inAlternatingOrder(
            p,
            () => measure(bed, 'sluice', reconcileAll),
            () => measure(bed, 'flux', () => pushed(bed, fluxNames, (name) => digests.get(name)!)),
          ),
        );
      }
      return {
        name: `(b) ${SMALL_DELIVERIES} deliveries of 4 objects, a new revision each, at once`,
        sluice: samples.map((s) => s.sluice),
        flux: samples.map((s) => s.flux),
        fluxWorkers: fluxWorkers === undefined ? undefined : `${fluxWorkers}`,
      };
    },
  };
}
