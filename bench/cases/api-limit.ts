import { cpus } from 'node:os';
import { APPLY_CONCURRENCY } from '../../functions/core/kube/apply.ts';
import { BareClient, bareApplyMix } from '../bare-client.ts';
import type { BenchContext } from '../context.ts';
import { measure, type Measured } from '../meter.ts';
import { crdGroup, mixObjects } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { formatMs, formatRatio, median } from '../stats.ts';
import { APPLY_COUNT, type ApplyRound } from './apply.ts';
import { deleteSpanMs, PRUNE_COUNT, type PruneRound } from './prune.ts';

/** What more requests in flight did for the bare client's applies, in words. */
function moreInFlight(byInFlight: readonly (readonly [number, number])[], cores: number): string {
  const figures = byInFlight.map(([inFlight, ms]) => `${inFlight} → ${formatMs(ms)}`).join(', ');
  const gain = byInFlight[0]![1] / byInFlight[byInFlight.length - 1]![1];
  return gain < 1.15
    ? `More requests in flight barely help (${figures}): the API server and etcd, on the same ${cores} cores as ` +
        'the client, cannot answer faster.'
    : `More requests in flight help (${figures}: ${formatRatio(gain)}); sluice keeps ${byInFlight[0]![0]} in flight.`;
}

export interface ApiLimitResult {
  readonly outcome: BenchOutcome;
  /** The bare client's time for sluice's request pattern at 1,000 objects. */
  readonly floorMs: number;
}

/**
 * The API server's own throughput on this machine: a bare client (no discovery, no inventory, no
 * comparison) sending the same server-side applies for a fresh 1,000-object mix, with and without
 * the dry-run sluice sends first, at sluice's concurrency and above.
 */
export async function apiLimitBench(
  ctx: BenchContext,
  applied: readonly ApplyRound[],
  pruned: readonly PruneRound[],
): Promise<ApiLimitResult> {
  let n = 0;
  const bare = (concurrency: number, dryRunFirst: boolean) => {
    const prefix = `b${++n}`;
    return measure(ctx.components, () =>
      bareApplyMix(
        ctx.components,
        mixObjects({ count: APPLY_COUNT, prefix }),
        `widgets.${crdGroup(prefix)}`,
        concurrency,
        dryRunFirst,
      ),
    );
  };
  const runs: [string, number, Measured<number>][] = [
    ["bare: dry-run + apply (sluice's requests)", APPLY_CONCURRENCY, await bare(APPLY_CONCURRENCY, true)],
    ['bare: apply only', APPLY_CONCURRENCY, await bare(APPLY_CONCURRENCY, false)],
    ['bare: apply only', APPLY_CONCURRENCY * 2, await bare(APPLY_CONCURRENCY * 2, false)],
    ['bare: apply only', APPLY_CONCURRENCY * 4, await bare(APPLY_CONCURRENCY * 4, false)],
  ];
  // Deletes: the last 500 objects of the first bare set, as sluice prunes them, then as kubectl does.
  const first = mixObjects({ count: APPLY_COUNT, prefix: 'b1' }).slice(APPLY_COUNT - PRUNE_COUNT);
  const half = first.length / 2;
  const deletes: [string, number, Measured<void>][] = [];
  for (const [inFlight, objects] of [
    [APPLY_CONCURRENCY, first.slice(0, half)],
    [1, first.slice(half)],
  ] as const) {
    const client = new BareClient(ctx.components, inFlight);
    deletes.push([
      `bare: delete ${objects.length} (× ${PRUNE_COUNT / objects.length} for ${PRUNE_COUNT})`,
      inFlight,
      await measure(ctx.components, () => client.forAll(objects, (o) => client.delete(o))),
    ]);
    client.close();
  }
  const cores = cpus().length;
  const pruneStepMs = median(pruned.map((r) => deleteSpanMs(r.sluice)));
  const sluiceMs = median(applied.map((r) => r.sluice.ms));
  const sluiceCpu = median(applied.map((r) => r.sluice.serverCpu));
  const kubectlMs = median(applied.map((r) => r.kubectl.ms));
  const kubectlCpu = median(applied.map((r) => r.kubectl.serverCpu));
  const floorMs = runs[0]![2].ms;
  const row = (name: string, inFlight: string, requests: number, ms: number, cpu: number) => [
    name,
    inFlight,
    String(requests),
    formatMs(ms),
    Number.isNaN(cpu) ? '' : `${cpu.toFixed(1)} s`,
    Number.isNaN(cpu) ? '' : formatMs((cpu / cores) * 1000),
  ];
  return {
    floorMs,
    outcome: {
      targets: [],
      sections: [
        {
          title: 'What bounds us: the API server',
          method:
            `The API server's own limit on this machine, measured in the same run: a bare client applying fresh ` +
            `${APPLY_COUNT.toLocaleString('en')}-object mixes with the same server-side apply requests, over kept-alive ` +
            'connections, staged as sluice stages them, with nothing else. kube-apiserver and etcd share the ' +
            `${cores} cores with the client, so "CPU / cores" (the API server's and etcd's CPU time spread over every ` +
            'core) is the least wall time the server-side work alone could take.',
          table: {
            header: ['run', 'in flight', 'requests', 'wall time', 'API server + etcd CPU', 'CPU / cores'],
            rows: [
              row(
                'sluice reconcile (benchmark 1, median)',
                String(APPLY_CONCURRENCY),
                applied[0]!.sluice.requests.length,
                sluiceMs,
                sluiceCpu,
              ),
              row(
                'kubectl apply --server-side (benchmark 1)',
                '1',
                applied[0]!.kubectl.requests.length,
                kubectlMs,
                kubectlCpu,
              ),
              ...runs.map(([name, inFlight, m]) =>
                row(name, String(inFlight), m.requests.length, m.ms, m.serverCpu),
              ),
              row(
                `sluice prune step (benchmark 3, median)`,
                String(APPLY_CONCURRENCY),
                pruned[0]!.sluice.requests.filter((r) => r.verb === 'delete').length,
                pruneStepMs,
                Number.NaN,
              ),
              ...deletes.map(([name, inFlight, m]) =>
                row(name, String(inFlight), m.requests.length, m.ms, m.serverCpu),
              ),
            ],
          },
          notes: [
            sluiceMs > floorMs
              ? `sluice takes ${formatRatio(sluiceMs / floorMs)} the time of a bare client sending the same requests ` +
                `(${formatMs(sluiceMs - floorMs)} more: lease, pull, build, inventory and status writes, discovery).`
              : 'sluice takes no longer than a bare client sending the same requests (the difference is noise).',
            `Of sluice's requests, the dry-runs are half: applying alone takes a bare client ${formatMs(runs[1]![2].ms)}. ` +
              'The design validates the whole set with a server-side dry-run before the first write (nothing is ' +
              'applied when any object is invalid), so this half stays.',
            `Deletes: ${PRUNE_COUNT} take a bare client about ${formatMs((deletes[0]![2].ms * PRUNE_COUNT) / half)} at ` +
              `${APPLY_CONCURRENCY} in flight and ${formatMs((deletes[1]![2].ms * PRUNE_COUNT) / half)} one at a time ` +
              `(kubectl's way); sluice's prune step took ${formatMs(pruneStepMs)}. A whole reconcile adds what every ` +
              'run does (lease, pull, build, compare, inventory, status: see the no-op figure), which is why pruning ' +
              'is not 3× faster than `kubectl delete --wait=false` here: its deletes are at the floor already.',
            moreInFlight(
              runs.slice(1).map(([, inFlight, m]) => [inFlight, m.ms] as const),
              cores,
            ),
          ],
        },
      ],
    },
  };
}
