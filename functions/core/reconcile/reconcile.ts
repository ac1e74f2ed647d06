import type { Delivery } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { evaluateGates } from '../gates/evaluate.ts';
import { waitingMessage } from '../gates/messages.ts';
import { pullArtifact, resolveArtifact } from '../oci/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { acquireLease } from '../store/lease.ts';
import { getStatus } from '../store/status.ts';
import { applyRevision } from './apply-revision.ts';
import { isUpToDate, unreadyDependencies } from './dependencies.ts';
import type { ReconcileDeps } from './deps.ts';
import { step } from './guards.ts';
import {
  block,
  blockedStatus,
  finish,
  holdMassPrune,
  reconcileWaitingDependents,
  scheduleRetry,
  waitForDependencies,
  type ReconcileResult,
} from './outcomes.ts';
import { PruneLimitHold } from './prune-limit.ts';

export type { ReconcileResult } from './outcomes.ts';

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
    const previous = await getStatus(deps.db, name);
    const lastApplied = previous?.lastAppliedRevision;
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
        ...blockedStatus(gates.blockRevisions, started, previous),
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
    // Deliveries can only be waiting on this one if it was not ready before this run.
    if (!isUpToDate(previous)) await reconcileWaitingDependents(name, deps);
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

/** The source pinned to the digest of `revision` (`<tag>@sha256:<hex>` or `sha256:<hex>`). */
function pinnedTo(source: Delivery['source'], revision: string): Delivery['source'] {
  const digest = revision.slice(revision.lastIndexOf('sha256:'));
  return { ...source, tag: undefined, semver: undefined, digest };
}
