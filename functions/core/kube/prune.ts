import type { KubernetesObject } from '@kubernetes/client-node';
import { SluiceError } from '../errors.ts';
import { apiVersionOf, entryFor, refOf, type InventoryEntry } from '../manifests/inventory.ts';
import { describeObject, OWNER_LABEL, PRUNE_ANNOTATION } from '../manifests/objects.ts';
import { apiErrorMessage, statusCodeOf, type KubeClient } from './client.ts';
import { APPLY_CONCURRENCY, forEachBounded } from './pool.ts';
import { compareApplyOrder, STAGES, stageOf } from './stages.ts';

export interface PruneResult {
  /** Ids deleted (or already gone). */
  readonly deleted: string[];
  /** Ids left in place, with the reason. */
  readonly skipped: { id: string; reason: string }[];
}

/** From this many objects of one kind to prune, one list of the kind replaces a read per object. */
const LIST_FROM = 10;

interface Target {
  readonly entry: InventoryEntry;
  readonly object: KubernetesObject;
}

/** What is known of the kinds to prune: whether each is served, and the owned objects of the listed ones. */
interface KindsSeen {
  readonly served: ReadonlyMap<string, boolean>;
  readonly owned: ReadonlyMap<string, KubernetesObject>;
}

const kindKey = (object: KubernetesObject) => `${object.apiVersion}/${object.kind}`;

/**
 * Asks discovery once per kind, and lists the kinds with many objects to prune (owner label
 * selector) so their objects need no read each. A kind whose list fails is read object by object.
 */
async function seeKinds(
  kube: KubeClient,
  targets: readonly Target[],
  deliveryName: string,
): Promise<KindsSeen> {
  const byKind = new Map<string, Target[]>();
  for (const target of targets) {
    const key = kindKey(target.object);
    const ofKind = byKind.get(key);
    if (ofKind) ofKind.push(target);
    else byKind.set(key, [target]);
  }
  const served = new Map<string, boolean>();
  const owned = new Map<string, KubernetesObject>();
  await forEachBounded([...byKind], APPLY_CONCURRENCY, async ([key, ofKind]) => {
    const { apiVersion, kind } = ofKind[0]!.object;
    const isServed = (await kube.resource(apiVersion!, kind!)) !== undefined;
    served.set(key, isServed);
    if (!isServed || ofKind.length < LIST_FROM) return;
    try {
      for (const object of await kube.list(apiVersion!, kind!, `${OWNER_LABEL}=${deliveryName}`))
        owned.set(entryFor(object).id, object);
    } catch {
      // read object by object instead, as for a few objects
    }
  });
  return { served, owned };
}

/**
 * Deletes the inventoried objects in `entries`, in reverse apply order (workloads, then classes,
 * then definitions), never one whose owner label does not name this delivery or that is
 * annotated `sluice.io/prune: disabled`. Each delete is conditional on the object being the one
 * that was checked (same uid); one replaced since is checked again.
 */
export async function pruneEntries(
  kube: KubeClient,
  entries: readonly InventoryEntry[],
  deliveryName: string,
): Promise<PruneResult> {
  const deleted: string[] = [];
  const skipped: { id: string; reason: string }[] = [];
  const targets: Target[] = entries.map((entry) => {
    const ref = refOf(entry);
    const object: KubernetesObject = {
      apiVersion: apiVersionOf(ref),
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
    };
    return { entry, object };
  });
  targets.sort((a, b) => compareApplyOrder(b.object, a.object));
  const kinds = await seeKinds(kube, targets, deliveryName);
  const failures: string[] = [];
  const reasonToKeep = (live: KubernetesObject): string | undefined => {
    const owner = live.metadata?.labels?.[OWNER_LABEL];
    if (owner !== deliveryName) return owner ? `owned by delivery '${owner}'` : `has no ${OWNER_LABEL} label`;
    if (live.metadata?.annotations?.[PRUNE_ANNOTATION] === 'disabled')
      return `annotated ${PRUNE_ANNOTATION}: disabled`;
    return undefined;
  };
  for (const stage of [...STAGES].reverse()) {
    const batch = targets.filter((t) => stageOf(t.object) === stage);
    await forEachBounded(batch, APPLY_CONCURRENCY, async ({ entry, object }) => {
      try {
        if (!kinds.served.get(kindKey(object))) {
          deleted.push(entry.id); // the kind is gone, and with it the object
          return;
        }
        // Listed kinds hold every object still labelled ours; any other is gone or not ours: read it.
        let live = kinds.owned.get(entry.id) ?? (await kube.get(object));
        for (let attempt = 0; ; attempt++) {
          if (!live) {
            deleted.push(entry.id);
            return;
          }
          const reason = reasonToKeep(live);
          if (reason) {
            skipped.push({ id: entry.id, reason });
            return;
          }
          try {
            await kube.delete(live, { uid: live.metadata?.uid });
            deleted.push(entry.id);
            return;
          } catch (error) {
            // 409: it was replaced since it was read; read the new one and decide again, once.
            if (statusCodeOf(error) !== 409 || attempt > 0) throw error;
            live = await kube.get(object);
          }
        }
      } catch (error) {
        failures.push(`${describeObject(object)}: ${apiErrorMessage(error)}`);
      }
    });
  }
  if (failures.length > 0)
    throw new SluiceError('PruneFailed', `could not delete ${failures.sort().join('; ')}`);
  return { deleted, skipped };
}
