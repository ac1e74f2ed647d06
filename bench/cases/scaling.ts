import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APPLY_CONCURRENCY } from '../../functions/core/kube/apply.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { bareApplyMix } from '../bare-client.ts';
import { deliver, kubectlApplyMix, reconcileOrFail, type BenchContext } from '../context.ts';
import { measure, type Measured } from '../meter.ts';
import { crdGroup, mixFiles, mixObjects } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { formatBytes, formatMs, formatRatio, median } from '../stats.ts';
import type { ApplyRound } from './apply.ts';

const MEMORY_COUNT = 5000;
const MEMORY_TARGET = 256 * 2 ** 20;
const SMALL_COUNT = 100;

interface ChildReport {
  readonly ms: number;
  readonly results: ReconcileResult[];
  readonly baselineRss: number;
  readonly sampledPeakRss: number;
  readonly peakHeapUsed: number;
  readonly maxRss: number;
}

/** The bundled reconcile handler run in a child process for one delivery. */
function reconcileInChild(bundle: string, delivery: string): Promise<ChildReport> {
  const script = join(fileURLToPath(new URL('..', import.meta.url)), 'memory-child.mjs');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', script, bundle, delivery], {
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_METRICS_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the memory child exited ${code}: ${stderr.slice(-2000)}`));
      try {
        resolve(JSON.parse(stdout) as ChildReport);
      } catch (error) {
        reject(new Error(`the memory child's report is not JSON: ${stdout.slice(0, 500)}`, { cause: error }));
      }
    });
  });
}

/** A bare client's floor for the same set: every object dry-run, then applied (sluice's request pattern). */
function bareFloor(ctx: BenchContext, count: number, prefix: string): Promise<number> {
  const objects = mixObjects({ count, prefix });
  return bareApplyMix(ctx.components, objects, `widgets.${crdGroup(prefix)}`, APPLY_CONCURRENCY, true);
}

/**
 * 6: peak memory of the bundled reconcile handler reconciling a 5,000-object artifact, in a child
 * process. 7: apply time at 100, 1,000 (from benchmark 1) and 5,000 objects (the same child run).
 */
export async function scalingBench(
  ctx: BenchContext,
  reconcileBundle: string,
  applied: readonly ApplyRound[],
  floor1000Ms: number,
): Promise<BenchOutcome> {
  await deliver(ctx, 'scale-100', 'bench/scale-100', mixFiles({ count: SMALL_COUNT, prefix: 'm1' }));
  const small: Measured<ReconcileResult> = await measure(ctx.components, () =>
    reconcileOrFail(ctx, 'scale-100'),
  );
  const smallKubectl = await measure(ctx.components, () =>
    kubectlApplyMix(ctx, mixFiles({ count: SMALL_COUNT, prefix: 'm2' }), 'm2'),
  );

  await deliver(ctx, 'scale-5000', 'bench/scale-5000', mixFiles({ count: MEMORY_COUNT, prefix: 'l1' }));
  const large = await measure(ctx.components, () => reconcileInChild(reconcileBundle, 'scale-5000'));
  const largeResult = large.result.results[0];
  if (largeResult?.outcome !== 'Succeeded' || largeResult.changes?.created !== MEMORY_COUNT)
    throw new Error(`the 5,000-object reconcile: ${JSON.stringify(largeResult)}`);

  const floor: Record<number, number> = {
    [SMALL_COUNT]: await bareFloor(ctx, SMALL_COUNT, 'f1'),
    1000: floor1000Ms,
    [MEMORY_COUNT]: await bareFloor(ctx, MEMORY_COUNT, 'f3'),
  };
  const mid = median(applied.map((r) => r.sluice.ms));
  const midKubectl = median(applied.map((r) => r.kubectl.ms));
  const rows: [number, number, number | undefined][] = [
    [SMALL_COUNT, small.ms, smallKubectl.ms],
    [1000, mid, midKubectl],
    [MEMORY_COUNT, large.result.ms, undefined],
  ];
  const peak = large.result.maxRss;
  return {
    targets: [
      {
        benchmark: `6. Peak memory reconciling ${MEMORY_COUNT.toLocaleString('en')} objects`,
        sluice: formatBytes(peak),
        reference: `${formatBytes(large.result.baselineRss)} (the same process before the reconcile)`,
        ratio: `${(peak / large.result.baselineRss).toFixed(1)}× the idle process`,
        target: `< ${formatBytes(MEMORY_TARGET)}`,
        holds: peak < MEMORY_TARGET,
      },
    ],
    sections: [
      {
        title: `6. Peak memory reconciling ${MEMORY_COUNT.toLocaleString('en')} objects`,
        method:
          `A delivery of a ${MEMORY_COUNT.toLocaleString('en')}-object mix, reconciled from scratch by the bundled reconcile ` +
          "handler (benchmark 5's bundle: what Lambda runs) in a child `node` process. Peak: the kernel's maximum " +
          'resident set of the process (`process.resourceUsage().maxRSS`); also sampled every 10 ms.',
        table: {
          header: ['', ''],
          rows: [
            ['peak RSS (kernel maxRSS)', formatBytes(peak)],
            ['peak RSS (sampled)', formatBytes(large.result.sampledPeakRss)],
            ['peak V8 heap used (sampled)', formatBytes(large.result.peakHeapUsed)],
            ['RSS after importing the handler, before the reconcile', formatBytes(large.result.baselineRss)],
            ['reconcile time', formatMs(large.result.ms)],
            ['API requests', String(large.requests.length)],
          ],
        },
      },
      {
        title: '7. Scaling: apply time by artifact size',
        method:
          'New objects of the same mix applied by one reconcile (100 in this process, 1,000 from benchmark 1, ' +
          `${MEMORY_COUNT.toLocaleString('en')} from benchmark 6's child process). Floor: a bare client sending the same ` +
          `server-side dry-runs and applies, ${APPLY_CONCURRENCY} at a time over kept-alive connections, and nothing else ` +
          '(see "What bounds us"). kubectl is not run at 5,000 (it would take minutes).',
        table: {
          header: [
            'objects',
            'sluice',
            'per object',
            'bare-client floor',
            'sluice / floor',
            'kubectl',
            'kubectl / sluice',
          ],
          rows: rows.map(([count, ms, kubectlMs]) => [
            count.toLocaleString('en'),
            formatMs(ms),
            `${(ms / count).toFixed(2)} ms`,
            formatMs(floor[count]!),
            formatRatio(ms / floor[count]!),
            kubectlMs === undefined ? '—' : formatMs(kubectlMs),
            kubectlMs === undefined ? '—' : formatRatio(kubectlMs / ms),
          ]),
        },
      },
    ],
  };
}
