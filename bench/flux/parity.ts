// npm run parity: differential parity with Flux. The same artifacts and the same settings are
// applied by Flux's controllers into one set of namespaces and by sluice into another, on the same
// API server, step by step (revisions, hand changes, reconciles of the same revision); after each
// step both must report the delivery ready (or not) alike, and every object of either side (every
// served kind listed) is compared field by field and by the fields each tool's manager owns.
// Prints every difference; exits 1 on one not in bench/flux/parity-accepted.json, or on an entry
// there that no longer occurs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { startBenchBed } from '../bed.ts';
import { benchContext, type BenchContext } from '../context.ts';
import { pushFiles } from '../delivery.ts';
import { kubectl } from '../kubectl.ts';
import { startFlux, type FluxControllers } from './controllers.ts';
import { acceptedBy, acceptedDifferences, renderIntoDocs } from './parity-accepted.ts';
import { compareObjects, type Difference } from './parity-compare.ts';
import { fluxObjects, fluxOutcome } from './parity-flux.ts';
import { liveObjects } from './parity-live.ts';
import { buildScenarios, type Scenario, type Side, type Step } from './parity-scenarios.ts';
import { lifecycleScenarios } from './parity-scenarios-lifecycle.ts';
import { fluxBinaries } from './provision.ts';
import { requestReconcile } from './resources.ts';

const say = (line: string) => process.stderr.write(`[parity] ${line}\n`);
const SIDES: readonly Side[] = ['sluice', 'flux'];

async function ensureNamespaces(ctx: BenchContext, scenario: Scenario): Promise<void> {
  for (const side of SIDES)
    for (const ns of scenario.namespaces(side))
      await kubectl(ctx.components, ['create', 'namespace', ns], ctx.kubectlCache).catch((error: unknown) => {
        if (!/AlreadyExists/.test(String(error))) throw error;
      });
}

async function register(ctx: BenchContext, flux: FluxControllers, scenario: Scenario): Promise<void> {
  const sluiceName = `sluice-${scenario.name}`;
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
  writeFileSync(file, fluxObjects(ctx.components, flux, `flux-${scenario.name}`, scenario.settings('flux')));
  await kubectl(ctx.components, ['apply', '-f', file], ctx.kubectlCache);
}

/** Runs one step on both sides at once; the readiness each reports, as a difference if they differ or are not as expected. */
async function runStep(
  ctx: BenchContext,
  flux: FluxControllers,
  scenario: Scenario,
  step: Step,
  first: boolean,
  digest: string,
): Promise<Difference[]> {
  const hands = (args: string[]) => kubectl(ctx.components, args, ctx.kubectlCache).then((r) => r.stdout);
  for (const side of SIDES) await step.byHand?.(side, hands);
  const fluxName = `flux-${scenario.name}`;
  const mark = first ? undefined : await requestReconcile(ctx.components, flux, [fluxName], ctx.kubectlCache);
  const [sluice, fluxSays] = await Promise.all([
    reconcile(`sluice-${scenario.name}`, ctx.deps),
    fluxOutcome(ctx.components, flux, fluxName, { digest, mark }),
  ]);
  const sluiceReady = sluice.outcome === 'Succeeded';
  const expected = step.ready ?? true;
  const describe = (ready: boolean, reason: string) => (ready ? 'ready' : `not ready (${reason})`);
  const [a, b] = [describe(sluiceReady, sluice.reason), describe(fluxSays.ready, fluxSays.reason)];
  say(`${scenario.name} ${step.name}: sluice ${a}; Flux ${b}`);
  if (!sluiceReady && sluice.outcome !== 'Failed')
    throw new Error(
      `${scenario.name} ${step.name}: sluice ${sluice.outcome} ${sluice.reason}: ${sluice.message}`,
    );
  const where = { scenario: scenario.name, step: step.name, kind: 'Delivery', object: scenario.name };
  if (sluiceReady !== fluxSays.ready)
    return [
      {
        ...where,
        path: '(ready)',
        sluice: `${a}: ${sluice.message}`.slice(0, 300),
        flux: `${b}: ${fluxSays.message}`.slice(0, 300),
      },
    ];
  if (sluiceReady !== expected)
    return [{ ...where, path: `(ready, expected ${expected ? 'ready' : 'not ready'})`, sluice: a, flux: b }];
  return [];
}

async function runScenario(
  ctx: BenchContext,
  flux: FluxControllers,
  scenario: Scenario,
): Promise<Difference[]> {
  const found: Difference[] = [];
  let digest = '';
  for (const [i, step] of scenario.steps.entries()) {
    if (step.files) {
      await pushFiles(ctx.components, `parity/sluice-${scenario.name}`, 'main', step.files('sluice'));
      digest = await pushFiles(ctx.components, `parity/flux-${scenario.name}`, 'main', step.files('flux'));
    }
    if (i === 0) {
      await ensureNamespaces(ctx, scenario);
      await register(ctx, flux, scenario);
    }
    found.push(...(await runStep(ctx, flux, scenario, step, i === 0, digest)));
    const live = await liveObjects(ctx, scenario.name);
    say(`${scenario.name} ${step.name}: sluice ${live.sluice.length} objects, Flux ${live.flux.length}`);
    found.push(...compareObjects(live.sluice, live.flux, { scenario: scenario.name, step: step.name }));
  }
  return found;
}

const line = (d: Difference) =>
  `${d.scenario} / ${d.step}: ${d.kind} ${d.object}: ${d.path}: sluice ${d.sluice} ≠ Flux ${d.flux}`;

async function main(): Promise<void> {
  const accepted = acceptedDifferences();
  if (renderIntoDocs(accepted)) say('docs/flux-parity.md: the accepted differences rendered anew');
  say('starting the local components and Flux');
  const bed = await startBenchBed();
  try {
    const ctx = await benchContext(bed.components, bed.dir);
    const flux = await startFlux(bed.components, fluxBinaries(say), ctx.tempDir('flux'), ctx.kubectlCache);
    try {
      const found: Difference[] = [];
      const only = process.env.PARITY_SCENARIOS?.split(',');
      for (const scenario of [...buildScenarios(), ...lifecycleScenarios()])
        if (!only || only.includes(scenario.name)) found.push(...(await runScenario(ctx, flux, scenario)));
      const used = new Set<unknown>();
      let unexplained = 0;
      for (const d of found) {
        const entry = acceptedBy(d, accepted);
        if (entry) used.add(entry);
        else unexplained++;
        process.stdout.write(`${entry ? 'accepted ' : 'DIFFERENT'} ${line(d)}\n`);
      }
      const stale = only ? [] : accepted.filter((entry) => !used.has(entry));
      for (const entry of stale)
        process.stdout.write(
          `NO LONGER ${entry.kind} ${entry.path}: sluice ${entry.sluice} ≠ Flux ${entry.flux} is accepted in bench/flux/parity-accepted.json but did not occur\n`,
        );
      say(
        `${found.length} differences, ${unexplained} not accepted in bench/flux/parity-accepted.json; ${stale.length} accepted ones no longer occur`,
      );
      if (unexplained > 0 || stale.length > 0) process.exitCode = 1;
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
