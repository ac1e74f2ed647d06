// npm run parity: differential parity with Flux. The same artifacts and the same settings are
// applied by Flux's controllers into one set of namespaces and by sluice into another, on the same
// API server, and the live objects compared field by field (owner labels, managed fields and
// generated metadata aside); then a revision that removes objects, and the survivors compared
// again. Prints every difference; exits 1 if there is any not listed in docs/flux-parity.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { startBenchBed } from '../bed.ts';
import { benchContext, reconcileOrFail, type BenchContext } from '../context.ts';
import { pushFiles } from '../delivery.ts';
import { kubectl } from '../kubectl.ts';
import { startFlux, type FluxControllers } from './controllers.ts';
import { fluxBinaries } from './provision.ts';
import { parityScenarios, type Scenario } from './parity-scenarios.ts';
import { requestReconcile, waitForKustomizations } from './resources.ts';

const say = (line: string) => process.stderr.write(`[parity] ${line}\n`);
const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** A live object as both sides are compared: generated and tool-specific metadata removed. */
type Live = Record<string, unknown> & { kind: string; metadata: Record<string, unknown> };

const OWNER_KEYS = /^(sluice\.io\/|kustomize\.toolkit\.fluxcd\.io\/)/;
const GENERATED_ANNOTATIONS = new Set(['deployment.kubernetes.io/revision']);

function normalise(object: Live, side: 'sluice' | 'flux'): Live {
  const metadata = { ...object.metadata };
  for (const key of [
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'managedFields',
    'selfLink',
  ])
    delete metadata[key];
  for (const field of ['labels', 'annotations'] as const) {
    const entries = Object.entries((metadata[field] as Record<string, string> | undefined) ?? {}).filter(
      ([key]) => !OWNER_KEYS.test(key) && !GENERATED_ANNOTATIONS.has(key),
    );
    if (entries.length > 0) metadata[field] = Object.fromEntries(entries);
    else delete metadata[field];
  }
  const copy: Live = { ...object, metadata };
  delete copy.status;
  if (copy.kind === 'Service') {
    const spec = { ...(copy.spec as Record<string, unknown>) };
    delete spec.clusterIP;
    delete spec.clusterIPs;
    copy.spec = spec;
  }
  // Each side's names carry its own prefix; the same placeholder stands for both.
  return JSON.parse(
    JSON.stringify(copy)
      .replaceAll(side === 'sluice' ? 'sluice-' : 'flux-', 'SIDE-')
      .replaceAll(side === 'sluice' ? '.sp.' : '.fp.', '.SIDE.'),
  ) as Live;
}

const keyOf = (o: Live) => `${o.kind} ${String(o.metadata.namespace ?? '')}/${String(o.metadata.name)}`;

/** Field paths where the two differ: `spec.replicas: 3 ≠ 2`. */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys]
      .sort()
      .flatMap((key) =>
        differences(
          (a as Record<string, unknown>)[key],
          (b as Record<string, unknown>)[key],
          path ? `${path}.${key}` : key,
        ),
      );
  }
  return [`${path}: sluice ${JSON.stringify(a) ?? '(absent)'} ≠ Flux ${JSON.stringify(b) ?? '(absent)'}`];
}

async function liveObjects(
  ctx: BenchContext,
  scenario: Scenario,
  side: 'sluice' | 'flux',
  selector: string,
): Promise<Map<string, Live>> {
  const kinds = [
    'namespaces',
    'configmaps',
    'secrets',
    'services',
    'deployments',
    'serviceaccounts',
    'customresourcedefinitions',
    ...scenario.customKinds(side),
  ];
  const { stdout } = await kubectl(
    ctx.components,
    ['get', kinds.join(','), '-A', '-l', selector, '-o', 'json'],
    ctx.kubectlCache,
  );
  const items = (JSON.parse(stdout) as { items: Live[] }).items.map((o) => normalise(o, side));
  return new Map(items.map((o) => [keyOf(o), o]));
}

function compare(sluice: Map<string, Live>, flux: Map<string, Live>): string[] {
  const found: string[] = [];
  for (const key of new Set([...sluice.keys(), ...flux.keys()])) {
    const [a, b] = [sluice.get(key), flux.get(key)];
    if (!a) found.push(`${key}: only Flux applied it`);
    else if (!b) found.push(`${key}: only sluice applied it`);
    else found.push(...differences(a, b).map((d) => `${key}: ${d}`));
  }
  return found;
}

async function runScenario(ctx: BenchContext, flux: FluxControllers, scenario: Scenario): Promise<string[]> {
  const found: string[] = [];
  const sluiceName = `sluice-${scenario.name}`;
  const fluxName = `flux-${scenario.name}`;
  for (const revision of [1, 2] as const) {
    await pushFiles(ctx.components, `parity/${sluiceName}`, 'main', scenario.files('sluice', revision));
    const fluxDigest = await pushFiles(
      ctx.components,
      `parity/${fluxName}`,
      'main',
      scenario.files('flux', revision),
    );
    for (const ns of scenario.namespaces('sluice'))
      await kubectl(ctx.components, ['create', 'namespace', ns], ctx.kubectlCache).catch(() => undefined);
    for (const ns of scenario.namespaces('flux'))
      await kubectl(ctx.components, ['create', 'namespace', ns], ctx.kubectlCache).catch(() => undefined);
    if (revision === 1) {
      const delivery = parseDelivery({
        name: sluiceName,
        source: {
          url: `oci://${ctx.components.registry.host}/parity/${sluiceName}`,
          tag: 'main',
          provider: 'aws',
        },
        cluster: { kubeconfig: ctx.components.kube.kubeconfig },
        ...scenario.settings('sluice'),
      });
      await putDelivery(ctx.deps.db, delivery, new Date());
      const file = join(ctx.tempDir('parity'), 'flux.yaml');
      writeFileSync(file, fluxObjects(ctx, flux, fluxName, scenario));
      await kubectl(ctx.components, ['apply', '-f', file], ctx.kubectlCache);
    } else {
      await requestReconcile(ctx.components, flux, [fluxName], ctx.kubectlCache);
    }
    await reconcileOrFail(ctx, sluiceName);
    await waitForKustomizations(ctx.components, flux, new Map([[fluxName, { digest: fluxDigest }]]), 120_000);
    const sluiceLive = await liveObjects(ctx, scenario, 'sluice', `sluice.io/delivery=${sluiceName}`);
    const fluxLive = await liveObjects(ctx, scenario, 'flux', `kustomize.toolkit.fluxcd.io/name=${fluxName}`);
    say(`${scenario.name} revision ${revision}: sluice ${sluiceLive.size} objects, Flux ${fluxLive.size}`);
    found.push(...compare(sluiceLive, fluxLive).map((d) => `${scenario.name} r${revision}: ${d}`));
  }
  return found;
}

function fluxObjects(ctx: BenchContext, flux: FluxControllers, name: string, scenario: Scenario): string {
  const metadata = { name, namespace: flux.namespace };
  return [
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata,
      spec: {
        interval: '60m',
        url: `oci://${ctx.components.registry.host}/parity/${name}`,
        ref: { tag: 'main' },
        insecure: true,
        secretRef: { name: flux.registrySecret },
      },
    },
    {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata,
      spec: { interval: '60m', sourceRef: { kind: 'OCIRepository', name }, ...scenario.settings('flux') },
    },
  ]
    .map((doc) => stringify(doc))
    .join('---\n');
}

/** The differences docs/flux-parity.md lists as known, one per `- \`…\`` line of its "Known differences". */
function knownDifferences(): string[] {
  const doc = readFileSync(join(root, 'docs', 'flux-parity.md'), 'utf8');
  return [...doc.matchAll(/^- `([^`]+)`/gm)].map((m) => m[1]!);
}

async function main(): Promise<void> {
  say('starting the local components and Flux');
  const bed = await startBenchBed();
  try {
    const ctx = await benchContext(bed.components, bed.dir);
    const flux = await startFlux(bed.components, fluxBinaries(say), ctx.tempDir('flux'), ctx.kubectlCache);
    try {
      const found: string[] = [];
      for (const scenario of parityScenarios()) found.push(...(await runScenario(ctx, flux, scenario)));
      const known = knownDifferences();
      const unexplained = found.filter((d) => !known.some((k) => d.includes(k)));
      for (const d of found)
        process.stdout.write(`${unexplained.includes(d) ? 'DIFFERENT' : 'known    '} ${d}\n`);
      say(`${found.length} differences, ${unexplained.length} not explained in docs/flux-parity.md`);
      if (unexplained.length > 0) process.exitCode = 1;
    } finally {
      await flux.stop();
    }
  } finally {
    await bed.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[parity] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
