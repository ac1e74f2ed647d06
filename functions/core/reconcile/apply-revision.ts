import type { KubernetesObject } from '@kubernetes/client-node';
import type { Delivery } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { applyStaged, dryRun, isUnchanged, listOwned } from '../kube/apply.ts';
import { KubeClient } from '../kube/client.ts';
import { impersonating } from '../kube/impersonation.ts';
import { prepareObjects, type DesiredObject } from '../kube/prepare.ts';
import { pruneEntries } from '../kube/prune.ts';
import { waitForHealthy } from '../kube/wait.ts';
import { buildManifests } from '../manifests/build.ts';
import { staleEntries, unionEntries, type InventoryEntry } from '../manifests/inventory.ts';
import type { Artifact } from '../oci/index.ts';
import { readInventory, writeInventory } from '../store/inventory.ts';
import type { Lease } from '../store/lease.ts';
import type { ChangeCounts } from '../store/status.ts';
import type { ReconcileDeps } from './deps.ts';
import { assertLeaseHeld, step } from './guards.ts';
import { checkPruneLimit } from './prune-limit.ts';

/** Build, validate, write-ahead inventory, apply, prune, record the inventory, health. */
export async function applyRevision(
  delivery: Delivery,
  artifact: Artifact,
  deps: ReconcileDeps,
  lease: Lease,
): Promise<ChangeCounts> {
  const name = delivery.name;
  const manifests = await step('BuildFailed', () =>
    buildManifests(artifact.files, delivery, artifact.revision, { kubectl: deps.kubectl }),
  );
  const kube = new KubeClient(
    impersonating(await step('ApplyFailed', () => deps.connect(delivery.cluster)), delivery.impersonate),
  );
  const desired = await step('ValidationFailed', () =>
    prepareObjects(manifests, kube, name, delivery.targetNamespace),
  );
  const oldInventory = await readInventory(deps.db, name);
  if (desired.length === 0 && oldInventory.length > 0 && !delivery.allowEmpty) {
    throw new SluiceError(
      'BuildFailed',
      `artifact ${artifact.revision} has no objects under path '${delivery.path}'; refusing to prune all ${oldInventory.length} objects of delivery '${name}' (set allowEmpty: true to allow it)`,
    );
  }

  const live = await step('ApplyFailed', () =>
    listOwned(
      kube,
      desired.map((d) => ({
        apiVersion: d.object.apiVersion!,
        kind: d.object.kind!,
        namespace: d.object.metadata?.namespace,
      })),
      name,
    ),
  );
  const appliedHash = new Map(oldInventory.map((entry) => [entry.id, entry.h]));
  const changed = desired.filter((d) => !isUnchanged(d, live.get(d.entry.id), appliedHash.get(d.entry.id)));
  await step('ValidationFailed', () =>
    dryRun(
      kube,
      changed.filter((d) => !d.deferred),
    ),
  );

  const finalEntries: InventoryEntry[] = desired.map((d) => ({ ...d.entry, h: d.hash }));
  const stale = staleEntries(oldInventory, finalEntries);
  await checkPruneLimit(delivery, artifact.revision, stale, oldInventory, deps.db, deps.clock.now());
  deps.log?.(
    `${name}: ${artifact.revision}: ${desired.length} objects, ${changed.length} to apply, ${delivery.prune ? stale.length : 0} to prune`,
  );
  // Also before the write-ahead: a run that lost its lease must not overwrite the new holder's inventory.
  assertLeaseHeld(lease, name);
  if (changed.length > 0) {
    // Write-ahead: every object this run may create is inventoried before the first write.
    const pending = new Set(changed.map((d) => d.entry.id));
    const writeAhead = finalEntries.map((e) => (pending.has(e.id) ? { id: e.id, v: e.v } : e));
    await writeInventory(deps.db, name, unionEntries(writeAhead, oldInventory));
  }
  assertLeaseHeld(lease, name);
  const { created, configured } = await step('ApplyFailed', () =>
    applyStaged(
      kube,
      changed,
      desired.filter((d) => d.deferred),
      live,
      delivery.timeoutMs,
    ),
  );

  let deleted = 0;
  if (delivery.prune && stale.length > 0) {
    assertLeaseHeld(lease, name);
    const pruned = await step('PruneFailed', () => pruneEntries(kube, stale, name));
    deleted = pruned.deleted.length;
    for (const skip of pruned.skipped) deps.log?.(`not pruned: ${skip.id} (${skip.reason})`);
  }
  if (changed.length > 0 || stale.length > 0) await writeInventory(deps.db, name, finalEntries);

  if (delivery.wait) {
    await waitForHealthy(
      kube,
      desired.map((d: DesiredObject): KubernetesObject => d.object),
      delivery.timeoutMs,
    );
  }
  return {
    created: created.length,
    configured: configured.length,
    unchanged: desired.length - changed.length,
    deleted,
  };
}
