import type { Delivery } from '../config/index.ts';
import { NotRegisteredError } from '../errors.ts';
import { evaluateGates, verdictFor } from '../gates/evaluate.ts';
import { pullResolved, resolveArtifact, type Resolved } from '../oci/index.ts';
import { getDelivery } from '../store/deliveries.ts';
import { acquireLease, dropLeaseOnlyItem, LeaseLostError, type Lease } from '../store/lease.ts';
import { applyRevision } from './apply-revision.ts';
import { ClusterBusy, clusterTurn, holdForBusyCluster } from './cluster-limit.ts';
import { unreadyDependencies } from './depends-on.ts';
import { Taint } from '../taint.ts';
import { rememberHeldRevision } from './desired.ts';
import { withTaint, type ReconcileDeps } from './deps.ts';
import { step } from './guards.ts';
import {
  block,
  fail,
  holdForRollout,
  holdMassPrune,
  reapplyForRollout,
  reapplyWhileHeld,
  startRun,
  succeed,
  type Applied,
  waitForDependencies,
  type ReconcileResult,
} from './outcomes.ts';
import { PruneLimitHold } from './prune-limit.ts';
import { followRollout, rolloutTarget } from './rollout-target.ts';

export type { ReconcileResult } from './outcomes.ts';

/** One reconcile of one delivery: the steps of DESIGN.md "One reconcile, in order". */
export async function reconcile(name: string, deps: ReconcileDeps): Promise<ReconcileResult> {
  const registered = await getDelivery(deps.db, name);
  if (!registered) throw new NotRegisteredError(name, ' (sluice register -f <config>)');
  if (registered.suspend) return suspended(name);

  const lease = await acquireLease(deps.db, name, deps.runId, deps.clock, { ttlMs: deps.leaseTtlMs });
  if (!lease) {
    const message = `another reconcile of delivery '${name}' holds the lease; this run changed nothing`;
    deps.log?.(message);
    return { delivery: name, outcome: 'Skipped', reason: 'LeaseHeld', message };
  }
  try {
    // Read again under the lease: a removal that held it before us has deleted the spec by now.
    const delivery = await getDelivery(deps.db, name);
    if (!delivery) {
      await dropLeaseOnlyItem(deps.db, lease.fence);
      const message = `delivery '${name}' was removed while this run waited; this run changed nothing`;
      return { delivery: name, outcome: 'Skipped', reason: 'NotRegistered', message };
    }
    if (delivery.suspend) return suspended(name);
    // Every value this run decrypts is scrubbed from its status, events, logs and result.
    const result = await reconcileHeld(
      delivery,
      withTaint({ ...deps, fence: lease.fence }, new Taint()),
      lease,
    );
    // A member that succeeded or failed may start the next members of its rollout, or halt it.
    if (result.outcome === 'Succeeded' || result.outcome === 'Failed')
      await followRollout(name, deps).catch((error: unknown) =>
        deps.log?.(`could not follow the rollout of '${name}': ${String(error)}`),
      );
    return result;
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    deps.log?.(error.message);
    return { delivery: name, outcome: 'Skipped', reason: 'LeaseLost', message: error.message };
  } finally {
    // A release that fails only delays the next run until the lease expires; it must not hide the result.
    await lease
      .release()
      .catch((error: unknown) => deps.log?.(`could not release the lease of '${name}': ${String(error)}`));
  }
}

function suspended(name: string): ReconcileResult {
  return {
    delivery: name,
    outcome: 'Skipped',
    reason: 'Suspended',
    message: `delivery '${name}' is suspended`,
  };
}

/** The run, once it holds the lease: `deps.fence` makes every table write conditional on it. */
async function reconcileHeld(
  delivery: Delivery,
  deps: ReconcileDeps,
  lease: Lease,
): Promise<ReconcileResult> {
  const run = startRun(delivery, deps, lease);
  let revision: string | undefined;
  try {
    const unready = await unreadyDependencies(delivery, deps.db, run.started);
    if (unready.length > 0) {
      await rememberHeldRevision(delivery, deps);
      return await waitForDependencies(run, unready);
    }
    const evaluation = await evaluateGates(delivery.name, delivery.gates, deps.db, run.started, deps);
    const closed = verdictFor(evaluation);
    const credentials = deps.registryCredentials(delivery.source);
    if (closed.blockAll.length > 0) {
      // Best effort: the held revision names what to approve; an unreachable registry changes nothing here.
      const held = await resolveArtifact(delivery.source, { credentials, cache: deps.artifactCache }).catch(
        () => undefined,
      );
      if (held) await rememberHeldRevision(delivery, deps, held);
      return await block(run, [...closed.blockAll, ...closed.blockRevisions], held?.revision);
    }
    const lastApplied = run.previous?.lastAppliedRevision;
    // A member of a rollout takes the rollout's revision when its wave and turn have come.
    const rollout = await step('ArtifactFailed', () => rolloutTarget(delivery.name, deps, run.started));
    // Held by its rollout, a member keeps its revision: re-applied (drift corrected), as in a freeze.
    if (rollout.kind === 'hold' && !lastApplied) return await holdForRollout(run, rollout);
    // Resolved once: the digest checked against the gates is the one pulled and applied, even if
    // the tag moves while this run goes on.
    const current =
      rollout.kind === 'take'
        ? rollout.resolved
        : rollout.kind === 'hold'
          ? { digest: digestOf(lastApplied!), revision: lastApplied! }
          : await step('ArtifactFailed', () =>
              resolveArtifact(delivery.source, { credentials, cache: deps.artifactCache }),
            );
    // An approval pinned to a revision opens its gate for that digest only.
    const gates = verdictFor(evaluation, current.revision);
    if (gates.blockAll.length > 0) {
      await rememberHeldRevision(delivery, deps, current);
      return await block(run, [...gates.blockAll, ...gates.blockRevisions], current.revision);
    }
    let held: string | undefined;
    let target: Resolved = current;
    if (gates.blockRevisions.length > 0 && current.revision !== lastApplied) {
      if (!lastApplied) {
        await rememberHeldRevision(delivery, deps, current);
        return await block(run, gates.blockRevisions, current.revision);
      }
      held = current.revision;
      target = { digest: digestOf(lastApplied), revision: lastApplied };
    }
    const artifact = await step('ArtifactFailed', () =>
      pullResolved(delivery.source, target, { credentials, limits: deps.limits, cache: deps.artifactCache }),
    );
    revision = artifact.revision;
    const turn = clusterTurn(delivery, deps);
    let applied: Applied;
    try {
      applied = await applyRevision(delivery, artifact, deps, lease, turn);
    } catch (error) {
      if (error instanceof ClusterBusy) return await holdForBusyCluster(run, artifact.revision);
      throw error;
    } finally {
      await turn
        .release()
        .catch((error: unknown) =>
          deps.log?.(`could not free the cluster slot of '${delivery.name}': ${String(error)}`),
        );
    }
    // What the held revision desires, stored after the re-applied one's (applyRevision stores that).
    if (held) await rememberHeldRevision(delivery, deps, current);
    if (held) return await reapplyWhileHeld(run, artifact, applied, held, gates.blockRevisions);
    if (rollout.kind === 'hold') return await reapplyForRollout(run, artifact, applied, rollout);
    return await succeed(run, artifact, applied);
  } catch (error) {
    if (error instanceof LeaseLostError) throw error;
    if (error instanceof PruneLimitHold) return await holdMassPrune(run, error, revision);
    return await fail(run, error, revision);
  }
}

/** The digest of `revision` (`<tag>@sha256:<hex>` or `sha256:<hex>`). */
function digestOf(revision: string): string {
  return revision.slice(revision.lastIndexOf('sha256:'));
}
