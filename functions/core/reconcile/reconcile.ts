import type { KubernetesObject } from '@kubernetes/client-node';
import type { Delivery } from '../config/index.ts';
import { SluiceError, type FailureReason } from '../errors.ts';
import { applyStaged, dryRun, isUnchanged, listOwned } from '../kube/apply.ts';
import { KubeClient } from '../kube/client.ts';
import { impersonating } from '../kube/impersonation.ts';
import { prepareObjects, type DesiredObject } from '../kube/prepare.ts';
import { pruneEntries } from '../kube/prune.ts';
import { waitForHealthy } from '../kube/wait.ts';
import { staleEntries, unionEntries, type InventoryEntry } from '../manifests/inventory.ts';
import { buildManifests } from '../manifests/build.ts';
import { evaluateGates } from '../gates/evaluate.ts';
import { waitingMessage } from '../gates/messages.ts';
import { pullArtifact, resolveArtifact, type Artifact } from '../oci/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { recordEvent, type ReconcileOutcome } from '../store/events.ts';
import { readInventory, writeInventory } from '../store/inventory.ts';
import { acquireLease, type Lease } from '../store/lease.ts';
import {
  getStatus,
  updateStatus,
  type BlockingGate,
  type ChangeCounts,
  type DeliveryStatus,
  type StatusUpdate,
} from '../store/status.ts';
import type { ReconcileDeps } from './deps.ts';
import {
  dependencyMessage,
  unreadyDependencies,
  waitingDependents,
  type UnreadyDependency,
} from './dependencies.ts';
import { checkPruneLimit, PruneLimitHold } from './prune-limit.ts';
import { retryTime } from './retry.ts';

export interface ReconcileResult {
  readonly delivery: string;
  /** `Skipped`: another run held the lease, or the delivery is suspended; nothing was touched. */
  readonly outcome: ReconcileOutcome | 'Skipped';
  readonly reason: string;
  readonly message: string;
  readonly revision?: string;
  readonly changes?: ChangeCounts;
  /** A failed run's scheduled retry (`retryInterval`). */
  readonly nextRetryAt?: string;
}

/** Runs `work`, turning any error that is not already a SluiceError into one with `reason`. */
async function step<T>(reason: FailureReason, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SluiceError) throw error;
    throw new SluiceError(reason, error instanceof Error ? error.message : String(error), { cause: error });
  }
}

function assertLeaseHeld(lease: Lease, name: string): void {
  if (lease.lost)
    throw new SluiceError(
      'ApplyFailed',
      `lost the lease of delivery '${name}' to another run; stopping before the next change`,
    );
}

/** One reconcile of one delivery: the steps of DESIGN.md "One reconcile, in order". */
export async function reconcile(name: string, deps: ReconcileDeps): Promise<ReconcileResult> {
  const delivery = await getDelivery(deps.db, name);
  if (!delivery) throw new Error(`delivery '${name}' is not registered (sluice register -f <config>)`);
  if (delivery.suspend)
    return {
      delivery: name,
      outcome: 'Skipped',
      reason: 'Suspended',
      message: `delivery '${name}' is suspended`,
    };

  const lease = await acquireLease(deps.db, name, deps.runId, deps.clock);
  if (!lease) {
    const message = `another reconcile of delivery '${name}' holds the lease; this run changed nothing`;
    deps.log?.(message);
    return { delivery: name, outcome: 'Skipped', reason: 'LeaseHeld', message };
  }
  const started = deps.clock.now();
  let revision: string | undefined;
  try {
    const unready = await unreadyDependencies(delivery, deps.db);
    if (unready.length > 0) return await waitForDependencies(deps, name, started, unready);
    const gates = await evaluateGates(name, delivery.gates, deps.db, started);
    if (gates.blockAll.length > 0) {
      return await block(deps, name, started, [...gates.blockAll, ...gates.blockRevisions]);
    }
    const credentials = deps.registryCredentials(delivery.source);
    let held: string | undefined;
    let source = delivery.source;
    const lastApplied = (await getStatus(deps.db, name))?.lastAppliedRevision;
    if (gates.blockRevisions.length > 0) {
      const current = await step('ArtifactFailed', () => resolveArtifact(delivery.source, { credentials }));
      if (current.revision !== lastApplied) {
        if (!lastApplied) return await block(deps, name, started, gates.blockRevisions, current.revision);
        held = current.revision;
        source = pinnedTo(delivery.source, lastApplied);
      }
    }
    const pulled = await step('ArtifactFailed', () => pullArtifact(source, { credentials }));
    const artifact = held ? { ...pulled, revision: lastApplied! } : pulled;
    revision = artifact.revision;
    const changes = await applyRevision(delivery, artifact, deps, lease);
    if (held) {
      const message = `re-applied ${artifact.revision} (drift corrected); revision ${held} is held: ${waitingMessage(gates.blockRevisions)}`;
      await finish(deps, name, started, 'Blocked', {
        ...blockedStatus(gates.blockRevisions, started, await getStatus(deps.db, name)),
        message,
        lastAppliedRevision: artifact.revision,
        lastAttemptedRevision: held,
        pendingRevision: held,
        inventorySize: changes.created + changes.configured + changes.unchanged,
        changes,
      });
      return { delivery: name, outcome: 'Blocked', reason: 'GateClosed', message, revision: held, changes };
    }
    const message = `Applied revision: ${artifact.revision}`;
    await finish(deps, name, started, 'Succeeded', {
      ready: true,
      reason: 'ReconciliationSucceeded',
      message,
      lastAppliedRevision: artifact.revision,
      lastAttemptedRevision: artifact.revision,
      inventorySize: changes.created + changes.configured + changes.unchanged,
      changes,
      lastSuccessAt: deps.clock.now().toISOString(),
      blockedBy: null,
      blockedSince: null,
      pendingRevision: null,
    });
    await reconcileWaitingDependents(name, deps);
    return {
      delivery: name,
      outcome: 'Succeeded',
      reason: 'ReconciliationSucceeded',
      message,
      revision,
      changes,
    };
  } catch (error) {
    if (error instanceof PruneLimitHold) return await holdMassPrune(deps, name, started, error, revision);
    const failure =
      error instanceof SluiceError ? error : new SluiceError('ApplyFailed', String(error), { cause: error });
    const nextRetryAt = await scheduleRetry(delivery, deps);
    await finish(deps, name, started, 'Failed', {
      ready: false,
      reason: failure.reason,
      message: failure.message,
      lastAttemptedRevision: revision,
      blockedBy: null,
      blockedSince: null,
      nextRetryAt: nextRetryAt ?? null,
    });
    return {
      delivery: name,
      outcome: 'Failed',
      reason: failure.reason,
      message: failure.message,
      revision,
      ...(nextRetryAt && { nextRetryAt }),
    };
  } finally {
    // A release that fails only delays the next run until the lease expires; it must not hide the result.
    await lease
      .release()
      .catch((error: unknown) => deps.log?.(`could not release the lease of '${name}': ${String(error)}`));
  }
}

/**
 * Schedules the retry of a failed run (`retryInterval`), unless a retry is already pending: a
 * failed interval or push run between retries must not start a second chain of them. A retry that
 * cannot be scheduled is logged, not fatal: the next regular run retries anyway.
 */
async function scheduleRetry(delivery: Delivery, deps: ReconcileDeps): Promise<string | undefined> {
  const now = deps.clock.now();
  const at = retryTime(delivery, now);
  if (!at || !deps.retryTimer) return undefined;
  const pending = (await getStatus(deps.db, delivery.name))?.nextRetryAt;
  if (pending && Date.parse(pending) > now.getTime()) return pending;
  try {
    return (await deps.retryTimer.retryAt(delivery.name, at)).toISOString();
  } catch (error) {
    deps.log?.(`could not schedule the retry of '${delivery.name}': ${String(error)}`);
    return undefined;
  }
}

/** The source pinned to the digest of `revision` (`<tag>@sha256:<hex>` or `sha256:<hex>`). */
function pinnedTo(source: Delivery['source'], revision: string): Delivery['source'] {
  const digest = revision.slice(revision.lastIndexOf('sha256:'));
  return { ...source, tag: undefined, semver: undefined, digest };
}

/** Status fields of a blocked delivery; `blockedSince` keeps the time it was first blocked. */
function blockedStatus(
  blocking: readonly BlockingGate[],
  now: Date,
  previous: DeliveryStatus | undefined,
): Pick<DeliveryStatus, 'ready' | 'reason' | 'blockedBy' | 'blockedSince'> {
  return {
    ready: false,
    reason: 'GateClosed',
    blockedBy: [...blocking],
    blockedSince: previous?.blockedSince ?? now.toISOString(),
  };
}

/** Records a run held by closed gates: nothing was applied or pruned. */
async function block(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  blocking: readonly BlockingGate[],
  pending?: string,
): Promise<ReconcileResult> {
  const message = waitingMessage(blocking);
  await finish(deps, name, started, 'Blocked', {
    ...blockedStatus(blocking, started, await getStatus(deps.db, name)),
    message,
    ...(pending && { pendingRevision: pending }),
  });
  return {
    delivery: name,
    outcome: 'Blocked',
    reason: 'GateClosed',
    message,
    ...(pending && { revision: pending }),
  };
}

/** Records a run held until the deliveries it depends on are ready: nothing was applied or pruned. */
async function waitForDependencies(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  unready: readonly UnreadyDependency[],
): Promise<ReconcileResult> {
  const message = dependencyMessage(unready);
  await finish(deps, name, started, 'Blocked', {
    ready: false,
    reason: 'DependencyNotReady',
    message,
    blockedBy: null,
    blockedSince: (await getStatus(deps.db, name))?.blockedSince ?? started.toISOString(),
  });
  return { delivery: name, outcome: 'Blocked', reason: 'DependencyNotReady', message };
}

/** Now that `name` is ready, the deliveries that were waiting on it reconcile at once (Lambda: asynchronously). */
async function reconcileWaitingDependents(name: string, deps: ReconcileDeps): Promise<void> {
  if (!deps.reconcileNow) return;
  try {
    const waiting = await waitingDependents(name, deps.db);
    if (waiting.length > 0) await deps.reconcileNow(waiting);
  } catch (error) {
    // Their own interval runs reconcile them anyway.
    deps.log?.(`could not reconcile the deliveries waiting on '${name}': ${String(error)}`);
  }
}

/** Records a run held by the mass-deletion brake: nothing was applied or pruned. */
async function holdMassPrune(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  hold: PruneLimitHold,
  revision: string | undefined,
): Promise<ReconcileResult> {
  const previous = await getStatus(deps.db, name);
  await finish(deps, name, started, 'Blocked', {
    ready: false,
    reason: 'PruneLimitExceeded',
    message: hold.message,
    lastAttemptedRevision: revision,
    pendingRevision: revision ?? null,
    blockedBy: hold.gate ? [hold.gate] : null,
    blockedSince: previous?.blockedSince ?? started.toISOString(),
  });
  return {
    delivery: name,
    outcome: 'Blocked',
    reason: 'PruneLimitExceeded',
    message: hold.message,
    ...(revision && { revision }),
  };
}

/** Build, validate, write-ahead inventory, apply, prune, record the inventory, health. */
async function applyRevision(
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

async function finish(
  deps: ReconcileDeps,
  name: string,
  started: Date,
  outcome: ReconcileOutcome,
  status: StatusUpdate,
): Promise<void> {
  const now = deps.clock.now();
  await updateStatus(deps.db, name, {
    // A retry is only pending after a failed run, which sets it.
    nextRetryAt: null,
    ...status,
    lastReconcileAt: now.toISOString(),
    durationMs: now.getTime() - started.getTime(),
  });
  const event = {
    delivery: name,
    outcome,
    reason: status.reason,
    message: status.message,
    revision: status.lastAttemptedRevision,
    time: now.toISOString(),
  };
  await recordEvent(deps.db, event);
  await deps.events
    ?.publish(event)
    .catch((error: unknown) => deps.log?.(`could not publish the reconcile event: ${String(error)}`));
}
