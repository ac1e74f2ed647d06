import { NotRegisteredError } from '../errors.ts';
import { pruneEntries, type PruneResult } from '../kube/prune.ts';
import { deliveryFromStatusItem, removeDelivery } from '../store/deliveries.ts';
import { readInventory } from '../store/inventory.ts';
import { acquireLease, LeaseHeldError } from '../store/lease.ts';
import type { ReconcileDeps } from './deps.ts';
import { objectsOthersNeed, type KeptObject } from './shared-objects.ts';
import { clusterClient } from './cluster-client.ts';

export type { KeptObject } from './shared-objects.ts';

/** What removing a delivery did in its cluster. */
export interface DeletionResult extends PruneResult {
  readonly policy: 'Delete' | 'Orphan';
  /** Objects not deleted because another registered delivery's current artifact contains them. */
  readonly kept: readonly KeptObject[];
}

/**
 * Deletes a delivery: with `deletionPolicy: Delete` every inventoried object it owns is deleted
 * (reverse apply order; objects not labelled as its own are left), except those another registered
 * delivery on the same cluster would apply now (a rename: the new delivery takes them over on its
 * next run, reconciled at once), and except the CRDs and Namespaces holding objects it does not
 * delete (`containersKept`: left in place, with what holds them); with `Orphan` they stay. Then its spec, status and inventory are
 * removed from the table.
 */
export async function deleteDelivery(name: string, deps: ReconcileDeps): Promise<DeletionResult> {
  // The claim reads the spec with the lease, and is refused for a delivery that is not registered
  // (another removal may have finished while this one waited).
  const lease = await acquireLease(deps.db, name, deps.runId, deps.clock, {
    ttlMs: deps.leaseTtlMs,
    registered: true,
  });
  if (!lease) throw new LeaseHeldError(name);
  let result: DeletionResult;
  try {
    const delivery = deliveryFromStatusItem(lease.statusItem);
    if (!delivery) throw new NotRegisteredError(name);
    let pruned: PruneResult = { deleted: [], skipped: [], goneWithKind: [], containersKept: [] };
    let kept: KeptObject[] = [];
    if (delivery.deletionPolicy === 'Delete') {
      const inventory = await readInventory(deps.db, name);
      // Every delete checks the lease first: removal and reconcile are one writer at a time.
      const kube = await clusterClient(delivery, deps, () => lease.check());
      // Known before anything is deleted: a delivery that cannot be planned fails the removal here.
      kept = await objectsOthersNeed(delivery, inventory, kube, deps);
      const keep = new Set(kept.map((k) => k.id));
      pruned = await pruneEntries({
        kube,
        owner: name,
        entries: inventory.filter((entry) => !keep.has(entry.id)),
      });
    }
    await lease.check();
    await removeDelivery(deps.db, name);
    result = { ...pruned, policy: delivery.deletionPolicy, kept };
  } finally {
    await lease.release();
  }
  await reconcileKeepers(result.kept, deps);
  return result;
}

/** The deliveries that kept objects take them over now rather than at their next interval. */
async function reconcileKeepers(kept: readonly KeptObject[], deps: ReconcileDeps): Promise<void> {
  const keepers = [...new Set(kept.map((k) => k.delivery))];
  if (keepers.length === 0 || !deps.reconcileNow) return;
  try {
    await deps.reconcileNow(keepers);
  } catch (error) {
    // The removal is done; their own interval runs take the objects over anyway.
    deps.log?.(`could not start a reconcile of ${keepers.join(', ')}: ${String(error)}`);
  }
}
