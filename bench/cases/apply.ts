import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { summariseRequests } from '../audit.ts';
import { deliver, kubectlApplyMix, reconcileOrFail, type BenchContext } from '../context.ts';
import { measure, type Measured } from '../meter.ts';
import { mixFiles } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { formatMs, formatRatio, median, spread } from '../stats.ts';

export const APPLY_COUNT = 1000;
export const APPLY_TARGET = 3;

/** One round: the same 1,000-object mix applied by sluice and by kubectl, under different names. */
export interface ApplyRound {
  readonly round: number;
  readonly delivery: string;
  readonly repository: string;
  readonly sluicePrefix: string;
  readonly kubectlPrefix: string;
  readonly sluice: Measured<ReconcileResult>;
  readonly kubectl: Measured<void>;
}

export async function applyRound(ctx: BenchContext, round: number): Promise<ApplyRound> {
  const sluicePrefix = `s${round}`;
  const kubectlPrefix = `k${round}`;
  const delivery = `apply-${round}`;
  const repository = `bench/apply-${round}`;
  await deliver(ctx, delivery, repository, mixFiles({ count: APPLY_COUNT, prefix: sluicePrefix }));
  const runSluice = () => measure(ctx.components, () => reconcileOrFail(ctx, delivery));
  const runKubectl = () =>
    measure(ctx.components, () =>
      kubectlApplyMix(ctx, mixFiles({ count: APPLY_COUNT, prefix: kubectlPrefix }), kubectlPrefix),
    );
  // Alternate who goes first, so neither always meets the cluster in the same state.
  let sluice: Measured<ReconcileResult>;
  let kubectl: Measured<void>;
  if (round % 2 === 1) {
    sluice = await runSluice();
    kubectl = await runKubectl();
  } else {
    kubectl = await runKubectl();
    sluice = await runSluice();
  }
  if (sluice.result.changes?.created !== APPLY_COUNT)
    throw new Error(`sluice created ${sluice.result.changes?.created} objects, not ${APPLY_COUNT}`);
  return { round, delivery, repository, sluicePrefix, kubectlPrefix, sluice, kubectl };
}

const perObject = (ms: number) => `${(ms / APPLY_COUNT).toFixed(1)} ms`;

export function applyOutcome(rounds: readonly ApplyRound[]): BenchOutcome {
  const sluiceMs = rounds.map((r) => r.sluice.ms);
  const kubectlMs = rounds.map((r) => r.kubectl.ms);
  const ratio = median(kubectlMs) / median(sluiceMs);
  const first = rounds[0]!;
  return {
    targets: [
      {
        benchmark: `1. Apply ${APPLY_COUNT.toLocaleString('en')} new objects`,
        sluice: formatMs(median(sluiceMs)),
        reference: `${formatMs(median(kubectlMs))} (kubectl apply --server-side)`,
        ratio: `${formatRatio(ratio)} faster`,
        target: `≥ ${APPLY_TARGET}× faster`,
        holds: ratio >= APPLY_TARGET,
      },
    ],
    sections: [
      {
        title: `1. Apply ${APPLY_COUNT.toLocaleString('en')} new objects`,
        method:
          `A realistic mix of ${APPLY_COUNT.toLocaleString('en')} new objects: a CRD, 20 Namespaces, and across them ConfigMaps, ` +
          'headless Services, Deployments (resources written `cpu: 0.5`, `memory: 1Gi`) and custom resources of the CRD. ' +
          'sluice: one `reconcile()` of a delivery of the pushed artifact, all of it (lease, pull, build, validate with ' +
          'server-side dry-run, write-ahead inventory, staged apply waiting for the CRD, final inventory, status). ' +
          "kubectl: the same files under other names with the layer's kubectl and a warm discovery cache: " +
          '`kubectl apply --server-side -f cluster.yaml`, `kubectl wait --for=condition=Established crd/…`, ' +
          '`kubectl apply --server-side -R -f apps/`. Median of the rounds; who goes first alternates.',
        table: {
          header: ['', 'sluice', 'kubectl', 'ratio'],
          rows: [
            ['wall time', spread(sluiceMs), spread(kubectlMs), formatRatio(ratio)],
            ['per object', perObject(median(sluiceMs)), perObject(median(kubectlMs)), ''],
            ['API requests', String(first.sluice.requests.length), String(first.kubectl.requests.length), ''],
            ['of them writes', String(first.sluice.writes), String(first.kubectl.writes), ''],
            [
              'API server + etcd CPU',
              `${median(rounds.map((r) => r.sluice.serverCpu)).toFixed(1)} s`,
              `${median(rounds.map((r) => r.kubectl.serverCpu)).toFixed(1)} s`,
              '',
            ],
            [
              'client CPU',
              `${median(rounds.map((r) => r.sluice.ownCpu)).toFixed(1)} s (sluice, in this process)`,
              '(kubectl: not metered)',
              '',
            ],
          ],
        },
        notes: [
          `sluice's requests in round 1: ${summariseRequests(first.sluice.requests).slice(0, 6).join('; ')}; …`,
          'sluice makes two requests per new object (a server-side dry-run of the whole set before the first ' +
            'write, then the apply), kubectl one; sluice wins by keeping several in flight over kept-alive connections ' +
            'while kubectl applies one object after the other.',
        ],
      },
    ],
  };
}
