// The per-cluster concurrency limit in a reconcile: a run that has something to write (apply,
// prune, or wait for health) takes one of its cluster's slots first, and a run that finds them all
// taken (after a short wait) changes nothing, says so in its status, and is retried a minute or
// two later. A run that finds nothing to change has read a few lists and takes no slot.
import { createHash } from 'node:crypto';
import { clusterKey, DEFAULTS, type Delivery } from '../config/index.ts';
import { HoldError } from '../errors.ts';
import { acquireClusterSlot, type ClusterSlot } from '../store/cluster-slots.ts';
import type { ReconcileDeps } from './deps.ts';
import { hold, scheduleRetry, type ReconcileResult, type Run } from './outcomes.ts';

/** How many reconciles may apply to the delivery's cluster at once. */
export const clusterLimitOf = (delivery: Delivery): number =>
  delivery.clusterConcurrency ?? DEFAULTS.clusterConcurrency;

/** Thrown when a run's cluster had no free slot for it: it wrote nothing. */
export class ClusterBusy extends HoldError {
  override readonly name = 'ClusterBusy';
}

/** A run's claim on a slot of its cluster: taken when it first has something to write, given back at its end. */
export interface ClusterTurn {
  /** Takes a slot, once; throws ClusterBusy when none came free in time. */
  take(): Promise<void>;
  /** Frees the slot taken, unless the run's end freed it already. */
  release(): Promise<void>;
  /** The slot taken, for the run's end to free with its own write (see ClusterSlot.freeing). */
  held(): ClusterSlot | undefined;
}

export function clusterTurn(delivery: Delivery, deps: ReconcileDeps): ClusterTurn {
  let slot: ClusterSlot | undefined;
  return {
    async take() {
      if (slot) return;
      const cluster = clusterKey(delivery.cluster);
      slot = await acquireClusterSlot(
        deps.db,
        cluster,
        clusterLimitOf(delivery),
        `${deps.runId}/${delivery.name}`,
        deps.clock,
        { waitMs: deps.clusterSlotWaitMs, log: deps.log, preferred: deps.slotHints?.get(cluster) },
      );
      if (!slot) throw new ClusterBusy(`cluster ${cluster} is busy`);
      deps.slotHints?.set(cluster, slot.index);
    },
    async release() {
      await slot?.release();
      slot = undefined;
    },
    held: () => slot,
  };
}

/**
 * When a run held by a busy cluster is retried: 30 seconds to 2.5 minutes later, by a fixed offset
 * of the delivery's name, so the runs held in one wave come back spread over a few minutes
 * (Scheduler fires on whole minutes) rather than all in the next one.
 */
export function busyClusterRetryAt(delivery: string, now: Date): Date {
  const offset = createHash('sha256').update(delivery).digest().readUInt32BE(0) % 120_000;
  return new Date(now.getTime() + 30_000 + offset);
}

/** Records a run held because its cluster had no free slot: nothing was applied or pruned. */
export async function holdForBusyCluster(run: Run, revision: string): Promise<ReconcileResult> {
  const { delivery, deps } = run;
  const cluster = clusterKey(delivery.cluster);
  const limit = clusterLimitOf(delivery);
  const nextRetryAt = await scheduleRetry(run, busyClusterRetryAt(delivery.name, deps.clock.now()));
  const message = `cluster ${cluster} already has ${limit} reconciles applying (clusterConcurrency ${limit}); this run of ${revision} changed nothing and ${nextRetryAt ? `is retried at ${nextRetryAt}` : 'waits for the next run'}`;
  return hold(
    run,
    'ClusterBusy',
    message,
    { lastAttemptedRevision: revision, blockedBy: null, nextRetryAt: nextRetryAt ?? null },
    revision,
  );
}
