import { KubeClient } from '../kube/client.ts';
import { impersonating } from '../kube/impersonation.ts';
import { pruneEntries, type PruneResult } from '../kube/prune.ts';
import { getDelivery, removeDelivery } from '../store/deliveries.ts';
import { readInventory } from '../store/inventory.ts';
import { acquireLease } from '../store/lease.ts';
import type { ReconcileDeps } from './deps.ts';

/**
 * Deletes a delivery: with `deletionPolicy: Delete` every inventoried object it owns is deleted
 * (reverse apply order; objects not labelled as its own are left), with `Orphan` they stay.
 * Then its spec, status and inventory are removed from the table.
 */
export async function deleteDelivery(
  name: string,
  deps: ReconcileDeps,
): Promise<PruneResult & { policy: 'Delete' | 'Orphan' }> {
  const delivery = await getDelivery(deps.db, name);
  if (!delivery) throw new Error(`delivery '${name}' is not registered`);
  const lease = await acquireLease(deps.db, name, deps.runId, deps.clock);
  if (!lease) throw new Error(`delivery '${name}' is being reconciled right now; try again in a minute`);
  try {
    let result: PruneResult = { deleted: [], skipped: [] };
    if (delivery.deletionPolicy === 'Delete') {
      const inventory = await readInventory(deps.db, name);
      const kube = new KubeClient(impersonating(await deps.connect(delivery.cluster), delivery.impersonate));
      result = await pruneEntries(kube, inventory, name);
    }
    await removeDelivery(deps.db, name);
    return { ...result, policy: delivery.deletionPolicy };
  } finally {
    await lease.release();
  }
}
