// npm run bench: every benchmark of issue 8 in one run, on local components this run starts and
// stops, written to docs/benchmarks.md.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { startBenchBed } from './bed.ts';
import { apiLimitBench } from './cases/api-limit.ts';
import { applyOutcome, applyRound, type ApplyRound } from './cases/apply.ts';
import { bundlesBench } from './cases/bundles.ts';
import { fluxBench } from './cases/flux.ts';
import { limitsBench } from './cases/limits.ts';
import { noopBench } from './cases/noop.ts';
import { pruneOutcome, pruneRound, type PruneRound } from './cases/prune.ts';
import { pushBench } from './cases/push.ts';
import { scalingBench } from './cases/scaling.ts';
import { benchContext } from './context.ts';
import { describeMachine } from './machine.ts';
import { renderReport, type BenchOutcome } from './report.ts';
import { scaleSectionOf } from './scale/docs.ts';
import { withContents } from '../test/support/markdown-outline.ts';
import { formatMs } from './stats.ts';

/** Rounds of the apply and prune comparisons (each with fresh objects for both sides). */
const ROUNDS = Number(process.env.SLUICE_BENCH_ROUNDS ?? 3);
/** The round whose prune is compared with `kubectl delete -f` as typed (it waits; slow), not --wait=false. */
const KUBECTL_WAITS_ROUND = 1;

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const output = process.env.SLUICE_BENCH_OUTPUT ?? join(root, 'docs', 'benchmarks.md');
/** `flux`: only the Flux comparison (to work on it; the report then holds only that). */
const only = process.env.SLUICE_BENCH_ONLY;
const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Writes the report, keeping the section `npm run scale` wrote (it runs apart, for long), with its contents list. */
async function writeReport(report: string): Promise<void> {
  const scale = existsSync(output) ? scaleSectionOf(readFileSync(output, 'utf8')) : undefined;
  const text = withContents(scale ? `${report.trimEnd()}\n\n${scale}\n` : report);
  writeFileSync(output, await format(text, { ...(await resolveConfig(output)), filepath: output }));
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadBefore = loadavg()[0]!;
  say('starting the local components');
  const bed = await startBenchBed();
  try {
    const ctx = await benchContext(bed.components, bed.dir);
    const machine = await describeMachine(bed.components);
    say(
      `${machine.cpu}, ${machine.cores} cores; kube-apiserver ${machine.kubeApiserver}, kubectl ${machine.kubectl}`,
    );

    if (only === 'flux') {
      say('Flux side by side');
      const flux = await fluxBench(ctx, say);
      const report = renderReport(machine, [flux], {
        totalMs: performance.now() - started,
        load: [loadBefore, loadavg()[0]!],
      });
      await writeReport(report);
      say(`wrote ${output} in ${formatMs(performance.now() - started)}`);
      return;
    }

    say('5. bundling the handlers and importing them');
    const bundles = await bundlesBench(ctx.tempDir('bundles'));

    const applied: ApplyRound[] = [];
    const pruned: PruneRound[] = [];
    let noop: BenchOutcome | undefined;
    let push: BenchOutcome | undefined;
    for (let round = 1; round <= ROUNDS; round++) {
      say(`1. round ${round}/${ROUNDS}: applying 1,000 objects with sluice and with kubectl`);
      const apply = await applyRound(ctx, round);
      applied.push(apply);
      say(`   sluice ${formatMs(apply.sluice.ms)}, kubectl ${formatMs(apply.kubectl.ms)}`);
      let revision = 1;
      if (round === 1) {
        say('2. no-op reconciles');
        noop = await noopBench(ctx, apply);
        say('4. push → applied');
        const pushed = await pushBench(ctx, apply);
        push = pushed.outcome;
        revision = pushed.revision;
      }
      say(`3. round ${round}/${ROUNDS}: pruning 500 objects with sluice and kubectl delete`);
      const prune = await pruneRound(ctx, apply, { revision, kubectlWaits: round === KUBECTL_WAITS_ROUND });
      pruned.push(prune);
      say(`   sluice ${formatMs(prune.sluice.ms)}, kubectl ${formatMs(prune.kubectl.ms)}`);
    }

    say('what bounds us: a bare client at the API server');
    const limit = await apiLimitBench(ctx, applied, pruned);
    say('6 + 7. 100 objects; 5,000 objects in a child process running the bundled handler');
    const scaling = await scalingBench(ctx, bundles.reconcileBundle, applied, limit.floorMs);
    say('8. the largest artifacts the limits accept, in a child process running the bundled handler');
    const largest = await limitsBench(ctx, bundles.reconcileBundle, say);
    say('Flux side by side: the same objects through source-controller and kustomize-controller');
    const flux = await fluxBench(ctx, say);

    const appendixFile = join(root, 'bench', 'optimisations.md');
    const report = renderReport(
      machine,
      [
        applyOutcome(applied),
        noop!,
        pruneOutcome(pruned),
        push!,
        bundles.outcome,
        scaling,
        largest,
        limit.outcome,
        flux,
      ],
      {
        totalMs: performance.now() - started,
        load: [loadBefore, loadavg()[0]!],
        appendix: existsSync(appendixFile) ? readFileSync(appendixFile, 'utf8') : undefined,
      },
    );
    await writeReport(report);
    say(`wrote ${output} in ${formatMs(performance.now() - started)}`);
  } finally {
    say('stopping the local components');
    await bed.stop();
    rmSync(bed.dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
