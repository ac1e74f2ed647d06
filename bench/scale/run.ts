// npm run scale: the scale-out simulation (bench/scale/simulate.ts) on local components this run
// starts and stops; its figures go to bench/scale/last-run.json, a section of docs/benchmarks.md
// and, with the cost model, docs/scale.md. SLUICE_SCALE_FROM=<json> rewrites the docs from a
// recorded run without running it again. SLUICE_SCALE_ROLLOUT (1000) and SLUICE_SCALE_ROLLOUT_MORE
// (10000; comma-separated, empty for none) are the rollouts' sizes, SLUICE_SCALE_ROLLOUT_STOP_AFTER
// (each) and SLUICE_SCALE_ROLLOUT_MORE_STOP_AFTER (the further ones) stop them after their first
// steps; SLUICE_SCALE_PLAIN=false runs
// the rollouts alone, keeping the plain phases' figures of the recorded run (SLUICE_SCALE_PLAIN_FROM,
// else SLUICE_SCALE_JSON).
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { startBenchBed } from '../bed.ts';
import { describeMachine } from '../machine.ts';
import { startClusters, stopClusters } from '../../dev/clusters.ts';
import { writeScaleDocs } from './docs.ts';
import type { ScaleOptions, ScaleResult } from './simulate.ts';

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const say = (line: string) => process.stderr.write(`[scale] ${line}\n`);
const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const options: ScaleOptions = {
  deliveries: number('SLUICE_SCALE_DELIVERIES', 1000),
  lambdaConcurrency: number('SLUICE_SCALE_CONCURRENCY', 50),
  clusterConcurrency: number('SLUICE_SCALE_CLUSTER_CONCURRENCY', 10),
  soloSample: number('SLUICE_SCALE_SOLO', 50),
  rolloutMembers: number('SLUICE_SCALE_ROLLOUT', 1000),
  rolloutMaxParallel: number('SLUICE_SCALE_ROLLOUT_MAX_PARALLEL', 50),
  rolloutSoakMinutes: number('SLUICE_SCALE_ROLLOUT_SOAK', 30),
  // The rollouts after the first, each over a fleet of its own: `SLUICE_SCALE_ROLLOUT_MORE=` (empty) for none.
  rolloutMoreMembers: (process.env.SLUICE_SCALE_ROLLOUT_MORE ?? '10000')
    .split(',')
    .filter(Boolean)
    .map(Number),
  // Each rollout stops after this many steps (a fleet too large for the time at hand).
  ...(process.env.SLUICE_SCALE_ROLLOUT_STOP_AFTER && {
    rolloutStopAfter: Number(process.env.SLUICE_SCALE_ROLLOUT_STOP_AFTER),
  }),
  // The further sizes alone stop after this many steps (SLUICE_SCALE_ROLLOUT_STOP_AFTER for every size).
  ...(process.env.SLUICE_SCALE_ROLLOUT_MORE_STOP_AFTER && {
    rolloutMoreStopAfter: Number(process.env.SLUICE_SCALE_ROLLOUT_MORE_STOP_AFTER),
  }),
  // false: the plain phases' figures are taken from the recorded run (SLUICE_SCALE_JSON), only the rollouts run.
  plain: process.env.SLUICE_SCALE_PLAIN !== 'false',
};
const clusterCount = number('SLUICE_SCALE_CLUSTERS', 4);
const json = process.env.SLUICE_SCALE_JSON ?? join(root, 'bench', 'scale', 'last-run.json');

async function simulateOnce(): Promise<ScaleResult> {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const started = performance.now();
  const loadBefore = loadavg()[0]!;
  say('starting the local components');
  const bed = await startBenchBed();
  try {
    say(`starting ${clusterCount - 1} more API servers (${clusterCount} clusters)`);
    const clusters = await startClusters(
      bed.components,
      Array.from({ length: clusterCount }, (_, i) => `cluster-${i + 1}`),
      bed.dir,
    );
    try {
      const machine = await describeMachine(bed.components);
      // Imported once the log level is set: the handler's logger reads it when it is created.
      const { simulate, withMachine } = await import('./simulate.ts');
      const recorded =
        options.plain === false
          ? (JSON.parse(readFileSync(process.env.SLUICE_SCALE_PLAIN_FROM ?? json, 'utf8')) as ScaleResult)
          : undefined;
      const result = await simulate(bed.components, clusters, options, say, recorded);
      return withMachine(result, {
        date: machine.date,
        cpu: machine.cpu,
        cores: machine.cores,
        load: [loadBefore, loadavg()[0]!],
        totalMs: performance.now() - started,
      });
    } finally {
      await stopClusters(clusters, bed.components);
    }
  } finally {
    say('stopping the local components');
    await bed.stop();
  }
}

async function main(): Promise<void> {
  const from = process.env.SLUICE_SCALE_FROM;
  const result = from ? (JSON.parse(readFileSync(from, 'utf8')) as ScaleResult) : await simulateOnce();
  if (!from)
    writeFileSync(
      json,
      await format(JSON.stringify(result), { ...(await resolveConfig(json)), filepath: json }),
    );
  if (process.env.SLUICE_SCALE_DOCS !== 'false') await writeScaleDocs(root, result);
  say(`done; figures in ${from ?? json}, docs/benchmarks.md and docs/scale.md`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[scale] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
