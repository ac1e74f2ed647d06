import { FLUX_CONCURRENCY } from '../flux/controllers.ts';
import { holds, medianRatio, pairRatios, type PairedCase, type Sample } from '../flux/pairs.ts';
import { FLUX_CONTROLLERS_VERSION, FLUX_RELEASE } from '../flux/provision.ts';
import type { BenchOutcome, TargetCheck } from '../report.ts';
import { formatBytes, formatMs, formatRatio, median, spread } from '../stats.ts';

const FLUX = `Flux ${FLUX_RELEASE}`;

/** How much faster each case must be: many small deliveries 2×, the rest simply faster. */
const atLeast = (c: PairedCase) => (c.name.startsWith('(b)') ? 2 : 1);

const workers = (c: PairedCase) =>
  c.fluxWorkers === undefined ? "Flux's defaults (2 source, 4 kustomize)" : `${c.fluxWorkers} each`;

const caseLabel = (c: PairedCase) =>
  c.fluxWorkers === `${FLUX_CONCURRENCY}` || !c.name.startsWith('(b)')
    ? c.name
    : `${c.name}, Flux at its defaults`;

/** The Flux rows of the targets table and the side-by-side section, from cases measured in pairs. */
export function fluxOutcome(
  cases: readonly PairedCase[],
  run: { readonly fluxRss: number; readonly pairs: number },
): BenchOutcome {
  const targets: TargetCheck[] = cases.map((c) => {
    const target = atLeast(c);
    const verdict = holds(c, target);
    const ratio = medianRatio(c);
    return {
      benchmark: `F${caseLabel(c)}: time, sluice vs Flux (median of ${c.sluice.length} pairs)`,
      sluice: formatMs(median(c.sluice.map((s) => s.ms))),
      reference: `${formatMs(median(c.flux.map((s) => s.ms)))} (${FLUX}, ${workers(c)})`,
      ratio: `${formatRatio(ratio >= 1 ? ratio : 1 / ratio)} ${ratio >= 1 ? 'faster' : 'slower'}; faster by ${target === 1 ? 'any margin' : `≥ ${target}×`} in ${verdict.pairsHeld} of ${c.sluice.length} pairs`,
      target: `${target === 1 ? 'faster than Flux' : `≥ ${target}× faster than Flux`}, on the median and in 4 of 5 pairs`,
      holds: verdict.holds,
    };
  });
  const steady = cases.find((c) => c.name.startsWith('(c)'))!;
  const requests = (samples: readonly Sample[]) => median(samples.map((s) => s.requests));
  targets.push({
    benchmark: 'F(c) steady state: API requests per interval, sluice vs Flux (median)',
    sluice: `${requests(steady.sluice)} requests`,
    reference: `${requests(steady.flux)} requests (${FLUX})`,
    ratio: `${formatRatio(requests(steady.flux) / Math.max(1, requests(steady.sluice)))} fewer`,
    target: 'fewer API requests than Flux',
    holds: steady.sluice.every((s, i) => s.requests < steady.flux[i]!.requests),
  });

  const row = (c: PairedCase, side: 'sluice' | 'flux') => {
    const samples = c[side];
    const won =
      side === 'sluice'
        ? `${pairRatios(c).filter((r) => r > 1).length} of ${samples.length}`
        : `${pairRatios(c).filter((r) => r < 1).length} of ${samples.length}`;
    const med = (pick: (s: Sample) => number) => median(samples.map(pick));
    return [
      caseLabel(c),
      side === 'sluice' ? 'sluice' : `${FLUX} (${workers(c)})`,
      spread(samples.map((s) => s.ms)),
      won,
      String(med((s) => s.requests)),
      String(med((s) => s.writes)),
      `${med((s) => s.serverCpu).toFixed(2)} s`,
      `${med((s) => s.clientCpu).toFixed(2)} s`,
    ];
  };
  return {
    targets,
    sections: [
      {
        title: `Flux side by side (${FLUX}: source-controller and kustomize-controller ${FLUX_CONTROLLERS_VERSION})`,
        method: [
          `Flux's controllers are built from Go modules (bench/flux/build-flux.sh) and run out of cluster against the same kube-apiserver, artifact storage on 127.0.0.1, leader election off.`,
          `Each Flux delivery is an OCIRepository on the same local registry (insecure, a docker-config Secret) and a Kustomization with \`prune: true\`, intervals of an hour so that only the reconciles the bench asks for run; each sluice delivery the same artifact under other names.`,
          `Every case is measured in ${run.pairs} pairs, one side right after the other, the order alternating (sluice first in pairs 1, 3, 5); a target holds only if it holds on the median and in at least 4 of 5 pairs.`,
          `Nothing but the two tools runs inside a window: artifacts are pushed and objects created before it, and the bench triggers and observes Flux through one kept-alive client (no kubectl process).`,
          `Each side is warmed up untimed: every delivery is first applied at a one-object (or first) revision.`,
          `Flux is triggered as a push webhook (its Receiver) does: the OCIRepositories are annotated (\`reconcile.fluxcd.io/requestedAt\`) and each Kustomization follows its source's new artifact; the steady state, where no artifact changes, as \`flux reconcile kustomization --with-source\` does: the source, waited for, then the Kustomization.`,
          `Flux is observed through one watch of its Kustomizations (Ready at the new digest, or having handled the request); sluice until the in-process reconcile returns, which is when its status is written.`,
          `Requests are the audit log's, told apart by user agent. Client CPU is, for Flux, its two controllers'; for sluice, this process's and DynamoDB Local's (its state store, which in AWS is a service).`,
          `Workers: Flux with \`--concurrent=${FLUX_CONCURRENCY}\` on both controllers, and in a second run of (b) at its defaults; sluice runs at most ${FLUX_CONCURRENCY} reconciles at a time in one process, as ${FLUX_CONCURRENCY} concurrent Lambda invocations would. Within a delivery, Flux applies and prunes one object at a time; sluice keeps up to 16 requests in flight.`,
        ].join(' '),
        table: {
          header: [
            'case',
            'who',
            'time: median (min–max)',
            'pairs won',
            'API requests',
            'writes',
            'API server + etcd CPU',
            'client CPU',
          ],
          rows: cases.flatMap((c) => [row(c, 'sluice'), row(c, 'flux')]),
        },
        notes: [
          `Flux's controllers' peak resident memory after (a)–(d) and (b) at ${FLUX_CONCURRENCY} workers: ${formatBytes(run.fluxRss)} (source-controller + kustomize-controller, VmHWM); sluice's reconcile of 5,000 objects peaks as benchmark 6 says, in a function that exists only while it runs.`,
          "Steady state: kustomize-controller dry-runs a server-side apply of every object each interval to find drift (and reads each back), where sluice lists the delivery's own objects by label, one list per kind, and compares them with the hashes it recorded.",
          'Requests, writes and CPU are the medians over the pairs.',
        ],
      },
    ],
  };
}
