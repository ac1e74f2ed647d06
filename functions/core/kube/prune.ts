import type { KubernetesObject } from '@kubernetes/client-node';
import { SluiceError } from '../errors.ts';
import { apiVersionOf, refOf, type InventoryEntry } from '../manifests/inventory.ts';
import { describeObject, OWNER_LABEL, PRUNE_ANNOTATION } from '../manifests/objects.ts';
import { apiErrorMessage, type KubeClient } from './client.ts';
import { forEachBounded } from './pool.ts';
import { APPLY_CONCURRENCY } from './apply.ts';
import { compareApplyOrder, STAGES, stageOf } from './stages.ts';

export interface PruneResult {
  /** Ids deleted (or already gone). */
  readonly deleted: string[];
  /** Ids left in place, with the reason. */
  readonly skipped: { id: string; reason: string }[];
}

/**
 * Deletes the inventoried objects in `entries`, in reverse apply order (workloads, then classes,
 * then definitions), never one whose owner label does not name this delivery or that is
 * annotated `sluice.io/prune: disabled`.
 */
export async function pruneEntries(
  kube: KubeClient,
  entries: readonly InventoryEntry[],
  deliveryName: string,
): Promise<PruneResult> {
  const deleted: string[] = [];
  const skipped: { id: string; reason: string }[] = [];
  const targets = entries.map((entry) => {
    const ref = refOf(entry);
    const object: KubernetesObject = {
      apiVersion: apiVersionOf(ref),
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
    };
    return { entry, object };
  });
  targets.sort((a, b) => compareApplyOrder(b.object, a.object));
  const failures: string[] = [];
  for (const stage of [...STAGES].reverse()) {
    const batch = targets.filter((t) => stageOf(t.object) === stage);
    await forEachBounded(batch, APPLY_CONCURRENCY, async ({ entry, object }) => {
      try {
        if (!(await kube.resource(object.apiVersion!, object.kind!))) {
          deleted.push(entry.id); // the kind is gone, and with it the object
          return;
        }
        const live = await kube.get(object);
        if (!live) {
          deleted.push(entry.id);
          return;
        }
        const owner = live.metadata?.labels?.[OWNER_LABEL];
        if (owner !== deliveryName) {
          skipped.push({
            id: entry.id,
            reason: owner ? `owned by delivery '${owner}'` : `has no ${OWNER_LABEL} label`,
          });
          return;
        }
        if (live.metadata?.annotations?.[PRUNE_ANNOTATION] === 'disabled') {
          skipped.push({ id: entry.id, reason: `annotated ${PRUNE_ANNOTATION}: disabled` });
          return;
        }
        await kube.delete(live);
        deleted.push(entry.id);
      } catch (error) {
        failures.push(`${describeObject(object)}: ${apiErrorMessage(error)}`);
      }
    });
  }
  if (failures.length > 0)
    throw new SluiceError('PruneFailed', `could not delete ${failures.sort().join('; ')}`);
  return { deleted, skipped };
}
