import { APPLY_CONCURRENCY } from '../../functions/core/kube/apply.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { summariseRequests } from '../audit.ts';
import { BareClient } from '../bare-client.ts';
import { reconcileOrFail, type BenchContext } from '../context.ts';
import { measure, type Measured } from '../meter.ts';
import { mixObjects } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { formatMs, median, spread } from '../stats.ts';
import { APPLY_COUNT, type ApplyRound } from './apply.ts';

const RUNS = 3;
const TIME_TARGET_MS = 1000;
/** The concurrency the per-object dry-run reference gets: sluice's. */
const REFERENCE_CONCURRENCY = APPLY_CONCURRENCY;

/**
 * Reconciles round 1's delivery again, unchanged, a few times; the reference is what a controller
 * that dry-runs every object (as Flux's kustomize-controller does) needs at the least.
 */
export async function noopBench(ctx: BenchContext, applied: ApplyRound): Promise<BenchOutcome> {
  const runs: Measured<ReconcileResult>[] = [];
  for (let i = 0; i < RUNS; i++)
    runs.push(await measure(ctx.components, () => reconcileOrFail(ctx, applied.delivery)));
  for (const run of runs) {
    if (run.result.changes?.unchanged !== APPLY_COUNT)
      throw new Error(`the no-op reconcile found ${JSON.stringify(run.result.changes)}`);
  }
  const objects = mixObjects({ count: APPLY_COUNT, prefix: applied.sluicePrefix });
  const kinds = new Set(objects.map((o) => `${o.apiVersion}/${o.kind}`)).size;
  const bare = new BareClient(ctx.components, REFERENCE_CONCURRENCY);
  const reference = await measure(ctx.components, () => bare.patchAll(objects, true));
  bare.close();

  const ms = runs.map((r) => r.ms);
  const requests = Math.max(...runs.map((r) => r.requests.length));
  const writes = Math.max(...runs.map((r) => r.writes));
  const budget = kinds + 2;
  return {
    targets: [
      {
        benchmark: `2. No-op reconcile of ${APPLY_COUNT.toLocaleString('en')} objects: requests`,
        sluice: `${requests} requests, ${writes} writes`,
        reference: `${reference.requests.length} requests (a dry-run per object)`,
        ratio: `${Math.round(reference.requests.length / requests)}× fewer`,
        target: `no writes, ≤ ${budget} requests (${kinds} kinds + 2)`,
        holds: writes === 0 && requests <= budget,
      },
      {
        benchmark: `2. No-op reconcile of ${APPLY_COUNT.toLocaleString('en')} objects: time`,
        sluice: formatMs(median(ms)),
        reference: `${formatMs(reference.ms)} (the dry-runs alone)`,
        ratio: `${(reference.ms / median(ms)).toFixed(1)}× faster`,
        target: `< ${formatMs(TIME_TARGET_MS)}`,
        holds: median(ms) < TIME_TARGET_MS,
      },
    ],
    sections: [
      {
        title: `2. No-op reconcile of ${APPLY_COUNT.toLocaleString('en')} unchanged objects`,
        method:
          `Round 1's delivery reconciled ${RUNS} more times with nothing changed: the whole run (lease, resolve, pull, ` +
          "build, compare, status). Requests are counted from the API server's audit log. sluice compares each object " +
          'with the hash stored in its inventory and with the live object from one list per kind (owner label ' +
          'selector), after one discovery of the API (`/api` and `/apis`, aggregated). The reference is the least a ' +
          `controller that dry-runs every object makes (Flux's kustomize-controller does): a bare client dry-running ` +
          `the same ${APPLY_COUNT.toLocaleString('en')} objects, ${REFERENCE_CONCURRENCY} at a time, nothing else.`,
        table: {
          header: ['', 'sluice no-op reconcile', 'dry-run per object (reference)'],
          rows: [
            ['wall time', spread(ms), formatMs(reference.ms)],
            [
              'API requests',
              runs.map((r) => r.requests.length).join(', '),
              String(reference.requests.length),
            ],
            ['writes', runs.map((r) => r.writes).join(', '), '0'],
            [
              'API server + etcd CPU',
              `${median(runs.map((r) => r.serverCpu)).toFixed(2)} s`,
              `${reference.serverCpu.toFixed(2)} s`,
            ],
          ],
        },
        notes: [`sluice's requests: ${summariseRequests(runs[0]!.requests).join('; ')}.`],
      },
    ],
  };
}
