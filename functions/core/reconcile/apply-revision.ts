import type { KubernetesObject } from '@kubernetes/client-node';
import { SluiceError } from '../errors.ts';
import { applyStaged, dryRun, isUnchanged, kindsOf, listOwned } from '../kube/apply.ts';
import type { OwnedLists } from '../kube/client.ts';
import { checkPruneCascade, type KeptContainer } from '../kube/cascade.ts';
import type { DesiredObject } from '../kube/prepare.ts';
import { pruneEntries } from '../kube/prune.ts';
import { waitForHealthy } from '../kube/wait.ts';
import { staleEntries, unionEntries, type InventoryEntry } from '../manifests/inventory.ts';
import { describeObject } from '../manifests/objects.ts';
import type { Artifact } from '../oci/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { readStoredInventory, writeInventory } from '../store/inventory.ts';
import type { ClusterTurn } from './cluster-limit.ts';
import { step } from './guards.ts';
import { ownershipConflicts, refuseConflicts } from './ownership.ts';
import { buildRevision, settleRevision } from './plan.ts';
import { rememberDesired } from './desired.ts';
import type { Applied, Run } from './outcomes.ts';
import { checkPruneLimit } from './prune-limit.ts';
import { clusterClient } from './cluster-client.ts';

/**
 * Build, validate, write-ahead inventory, apply, prune, record the inventory, health. A run with
 * something to write (or to wait for) takes its turn on the cluster (`turn`) before the first
 * dry-run: what it reads before is a few lists.
 */
export async function applyRevision(
  run: Run,
  artifact: Artifact,
  turn: Pick<ClusterTurn, 'take'>,
): Promise<Applied> {
  const { delivery, deps, lease } = run;
  const name = delivery.name;
  const manifests = await buildRevision(delivery, artifact, deps);
  // Compiled before anything is applied: a broken expression fails the run with nothing changed.
  // The CEL library is loaded only here, for a delivery that has expressions (its own bundle chunk).
  const healthCheckExprs =
    delivery.wait && delivery.healthCheckExprs?.length
      ? await step('HealthCheckFailed', async () => {
          const { compileHealthCheckExprs } = await import('../kube/compile-health-exprs.ts');
          return compileHealthCheckExprs(delivery.healthCheckExprs);
        })
      : undefined;
  const kube = await step('ApplyFailed', () => clusterClient(delivery, deps, () => lease.check()));
  // Lists made while settling (the delivery's Namespaces) serve the comparison below: no write between.
  const listed: OwnedLists = new Map();
  const desired = await settleRevision(manifests, kube, delivery, listed);
  await rememberDesired(
    run,
    artifact.revision,
    desired.map((d) => d.entry.id),
    'required',
  );
  const stored = await readStoredInventory(deps.db, name);
  const oldInventory = stored.entries;
  let chunked = stored.chunked;
  if (desired.length === 0 && oldInventory.length > 0 && !delivery.allowEmpty) {
    throw new SluiceError(
      'BuildFailed',
      `artifact ${artifact.revision} has no objects under path '${delivery.path}'; refusing to prune all ${oldInventory.length} objects of delivery '${name}' (set allowEmpty: true to allow it)`,
    );
  }

  const live = await step('ApplyFailed', () =>
    listOwned({ kube, owner: name, kinds: kindsOf(desired), listed }),
  );
  const isRegistered = async (other: string) => !!(await getDelivery(deps.db, other));
  // Every object, before the first write; those whose kind or namespace the definitions stage
  // creates are looked up again right after it, before their own apply.
  const checkOwnership = async (
    objects: readonly DesiredObject[],
    ours: ReadonlyMap<string, KubernetesObject>,
  ) =>
    refuseConflicts(
      await step('ApplyFailed', () => ownershipConflicts(kube, objects, ours, name, isRegistered)),
      name,
    );
  await checkOwnership(desired, live);
  const appliedHash = new Map(oldInventory.map((entry) => [entry.id, entry.h]));
  const changed = desired.filter((d) => !isUnchanged(d, live.get(d.entry.id), appliedHash.get(d.entry.id)));
  const finalEntries: InventoryEntry[] = desired.map((d) => ({ ...d.entry, h: d.hash }));
  const stale = staleEntries(oldInventory, finalEntries);
  if (changed.length > 0 || (delivery.prune && stale.length > 0) || delivery.wait) await turn.take();
  const recreated = await step('ValidationFailed', () =>
    dryRun(
      kube,
      changed.filter((d) => !d.deferred),
      live,
    ),
  );

  // A pruned CRD or Namespace deletes what it holds: it is kept while it holds anything else.
  const cascade = delivery.prune
    ? await step('PruneFailed', () => checkPruneCascade({ kube, owner: name, stale, desired: finalEntries }))
    : { cascaded: [], kept: [] };
  const keeping = new Set(cascade.kept.map((k) => k.id));
  // Everything the run deletes counts in the brake: the stale objects (but the CRDs and Namespaces
  // it keeps), what their deletion cascades to, and the objects sluice.io/force recreates.
  const alsoDeleted = [...cascade.cascaded, ...recreated.map((d) => describeObject(d.object))];
  await checkPruneLimit(
    delivery,
    {
      revision: artifact.revision,
      stale: stale.filter((entry) => !keeping.has(entry.id)),
      inventory: oldInventory,
      alsoDeleted,
    },
    deps.db,
    deps.clock.now(),
    deps,
  );
  deps.log?.(
    `${name}: ${artifact.revision}: ${desired.length} objects, ${changed.length} to apply, ${delivery.prune ? stale.length : 0} to prune`,
  );
  if (changed.length > 0) {
    // Write-ahead: every object this run may create is inventoried before the first write
    // (fenced: a run that lost its lease cannot overwrite the new holder's inventory).
    const pending = new Set(changed.map((d) => d.entry.id));
    const writeAhead = finalEntries.map((e) => (pending.has(e.id) ? { id: e.id, v: e.v } : e));
    // The desired set goes with it: a run that cannot store it applies nothing.
    chunked = await writeInventory(deps.db, name, unionEntries(writeAhead, oldInventory), lease.fence, {
      replacesChunks: chunked,
      also: run.pending.take(),
    });
  }
  const { created, configured } = await step('ApplyFailed', () =>
    applyStaged(kube, changed, {
      deferred: desired.filter((d) => d.deferred),
      live,
      clock: deps.clock,
      timeoutMs: delivery.timeoutMs,
      checkDeferred: async (later) =>
        checkOwnership(
          later,
          await step('ApplyFailed', () => listOwned({ kube, owner: name, kinds: kindsOf(later) })),
        ),
    }),
  );

  let deleted = 0;
  let kept: readonly KeptContainer[] = [];
  let recorded = finalEntries;
  if (delivery.prune && stale.length > 0) {
    const pruned = await step('PruneFailed', () =>
      pruneEntries({ kube, owner: name, entries: stale, desired: finalEntries }),
    );
    deleted = pruned.deleted.length;
    kept = pruned.containersKept;
    for (const skip of pruned.skipped) deps.log?.(`not pruned: ${skip.id} (${skip.reason})`);
    for (const id of pruned.goneWithKind) deps.log?.(`gone with its kind: ${id}`);
    // Kept containers stay in the inventory, marked: later runs prune them again.
    const keptIds = new Set(kept.map((k) => k.id));
    recorded = [
      ...finalEntries,
      ...stale.filter((e) => keptIds.has(e.id)).map((e) => ({ ...e, k: 1 as const })),
    ];
  }
  if (changed.length > 0 || stale.length > 0)
    await writeInventory(deps.db, name, recorded, lease.fence, {
      replacesChunks: chunked,
      also: run.pending.take(),
    });

  if (delivery.wait) {
    await waitForHealthy(
      kube,
      desired.map((d: DesiredObject): KubernetesObject => d.object),
      { clock: deps.clock, timeoutMs: delivery.timeoutMs, exprs: healthCheckExprs },
    );
  }
  const changes = {
    created: created.length,
    configured: configured.length,
    unchanged: desired.length - changed.length,
    deleted,
  };
  return { changes, kept };
}
