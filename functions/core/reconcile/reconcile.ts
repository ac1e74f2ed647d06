import type { Delivery } from '../config/index.ts';
import { NotRegisteredError } from '../errors.ts';
import { evaluateGates, verdictFor } from '../gates/evaluate.ts';
import { pullResolved, resolveArtifact, type Resolved } from '../oci/index.ts';
import { deliveryFromStatusItem } from '../store/deliveries.ts';
import { acquireLease, LeaseLostError, type Lease } from '../store/lease.ts';
import { applyRevision } from './apply-revision.ts';
import { ClusterBusy, clusterTurn, holdForBusyCluster } from './cluster-limit.ts';
import { unreadyDependencies } from './depends-on.ts';
import { Taint } from '../taint.ts';
import { rememberHeldRevision } from './desired.ts';
import { learnOwnedSecrets } from './owned-secrets.ts';
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
import { keptNote, pendingRollback, rollbackDecision, rollbackRun } from './rollback-run.ts';
import { followRollout, rolloutMembership, rolloutTarget, type RolloutMembership } from './rollout-target.ts';

export type { ReconcileResult } from './outcomes.ts';

/** One reconcile of one delivery: the steps of ARCHITECTURE.md, "Where each step of a reconcile lives". */
export async function reconcile(name: string, deps: ReconcileDeps): Promise<ReconcileResult> {
  // Claimed first: the claim reads the spec with the lease (its copy on the status item), and is
  // refused, writing nothing, for a delivery that is not registered.
  const lease = await acquireLease(deps.db, name, deps.runId, deps.clock, {
    ttlMs: deps.leaseTtlMs,
    registered: true,
  }).catch((error: unknown) => {
    if (error instanceof NotRegisteredError)
      throw new NotRegisteredError(name, ' (sluice register -f <config>)');
    throw error;
  });
  if (!lease) {
    const message = `another reconcile of delivery '${name}' holds the lease; this run changed nothing`;
    deps.log?.(message);
    return { delivery: name, outcome: 'Skipped', reason: 'LeaseHeld', message };
  }
  let result: ReconcileResult;
  // Looked up once, by whichever step asks first: resolving the revision, or following the rollout.
  const membership = rolloutMembership(deps.db, name);
  try {
    // The spec as of the claim: a removal that held the lease before us deleted it with the status item.
    const delivery = deliveryFromStatusItem(lease.statusItem);
    if (!delivery) throw new NotRegisteredError(name, ' (sluice register -f <config>)');
    if (delivery.suspend) return suspended(name);
    // Every Secret value this run decrypts or builds is scrubbed from its status, events, logs and
    // result; those of the Secrets the delivery owns in the cluster too, read before a failure is written.
    const taint = new Taint();
    learnOwnedSecrets(taint, delivery, deps);
    result = await reconcileHeld(delivery, withTaint(deps, taint), lease, membership);
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
  // A member that succeeded or failed may start the next members of its rollout, or halt it; once
  // its lease is free, so that it can be reconciled again itself (followRollout says when).
  if (result.outcome === 'Succeeded' || result.outcome === 'Failed')
    await followRollout(name, deps, result, membership).catch((error: unknown) =>
      deps.log?.(`could not follow the rollout of '${name}': ${String(error)}`),
    );
  // Named when the run looked it up anyway (the dashboard's rollout widgets read it from the log line).
  const rollout = (await membership.asked()?.catch(() => undefined))?.rollout;
  return rollout ? { ...result, rollout } : result;
}

function suspended(name: string): ReconcileResult {
  return {
    delivery: name,
    outcome: 'Skipped',
    reason: 'Suspended',
    message: `delivery '${name}' is suspended`,
  };
}

/** The run, once it holds the lease: its fence (`run.lease`) makes every table write conditional on it. */
async function reconcileHeld(
  delivery: Delivery,
  deps: ReconcileDeps,
  lease: Lease,
  membership: RolloutMembership,
): Promise<ReconcileResult> {
  // A slot of the cluster, taken when the run has something to write, is freed by the run's end
  // with its status (one request less); a run that fails or is held frees it at once.
  const turn = clusterTurn(delivery, deps);
  const freeTurn = () =>
    turn
      .release()
      .catch((error: unknown) =>
        deps.log?.(`could not free the cluster slot of '${delivery.name}': ${String(error)}`),
      );
  const run = startRun(delivery, deps, lease, turn);
  let revision: string | undefined;
  try {
    const unready = await unreadyDependencies(delivery, deps.db, run.started);
    if (unready.length > 0) {
      await rememberHeldRevision(run);
      return await waitForDependencies(run, unready);
    }
    const evaluation = await evaluateGates(delivery.name, delivery.gates, deps.db, run.started, deps);
    // A rollback asked for goes through every closed gate but those that hold rollback; a rollout's
    // member follows its rollout (sluice rollout rollback), whatever was asked for it alone.
    const rollback = pendingRollback(run);
    if (rollback && !(await membership())) {
      const result = await rollbackRun(run, rollback, evaluation, turn);
      if (result) return result;
    }
    const closed = verdictFor(evaluation);
    const credentials = deps.registryCredentials(delivery.source);
    if (closed.blockAll.length > 0) {
      // Best effort: the held revision names what to approve; an unreachable registry changes nothing here.
      const held = await resolveArtifact(delivery.source, { credentials, cache: deps.artifactCache }).catch(
        () => undefined,
      );
      if (held) await rememberHeldRevision(run, held);
      return await block(run, [...closed.blockAll, ...closed.blockRevisions], held?.revision);
    }
    const lastApplied = run.previous?.lastAppliedRevision;
    // A member of a rollout takes the rollout's revision when its wave and turn have come.
    const rollout = await step('ArtifactFailed', () =>
      rolloutTarget(delivery.name, deps, run.started, membership, {
        previous: run.previous,
        fence: run.lease.fence,
        rollout: run.rollout,
      }),
    );
    // Held by its rollout, a member keeps its revision: re-applied (drift corrected), as in a freeze.
    if (rollout.kind === 'hold' && !lastApplied) return await holdForRollout(run, rollout);
    // Resolved once: the digest checked against the gates is the one pulled and applied, even if
    // the tag moves while this run goes on.
    let current =
      rollout.kind === 'take'
        ? rollout.resolved
        : rollout.kind === 'hold'
          ? { digest: digestOf(lastApplied!), revision: lastApplied! }
          : await step('ArtifactFailed', () =>
              resolveArtifact(delivery.source, { credentials, cache: deps.artifactCache }),
            );
    // Rolled back: the delivery stays at the rollback's revision while its source resolves to the
    // digest it was rolled back from (a re-apply, as drift correction is).
    let note: string | undefined;
    const kept = rollout.kind === 'none' && lastApplied ? rollbackDecision(run, current) : undefined;
    if (kept?.kind === 'keep') {
      current = { digest: digestOf(lastApplied!), revision: lastApplied! };
      note = keptNote(kept.request, delivery);
    }
    // An approval pinned to a revision opens its gate for that digest only.
    const gates = verdictFor(evaluation, current.revision);
    if (gates.blockAll.length > 0) {
      await rememberHeldRevision(run, current);
      return await block(run, [...gates.blockAll, ...gates.blockRevisions], current.revision);
    }
    let held: string | undefined;
    let target: Resolved = current;
    if (gates.blockRevisions.length > 0 && current.revision !== lastApplied) {
      if (!lastApplied) {
        await rememberHeldRevision(run, current);
        return await block(run, gates.blockRevisions, current.revision);
      }
      held = current.revision;
      target = { digest: digestOf(lastApplied), revision: lastApplied };
    }
    const artifact = await step('ArtifactFailed', () =>
      pullResolved(delivery.source, target, {
        credentials,
        limits: deps.limits,
        cache: deps.artifactCache,
        kmsPublicKeys: deps.kmsPublicKeys,
        notation: deps.notation,
      }),
    );
    revision = artifact.revision;
    let applied: Applied;
    try {
      applied = await applyRevision(run, artifact, turn);
    } catch (error) {
      await freeTurn();
      if (error instanceof ClusterBusy) return await holdForBusyCluster(run, artifact.revision);
      throw error;
    }
    if (held) {
      // What the held revision desires, stored after the re-applied one's (applyRevision stores
      // that); built after the slot is freed: it writes nothing to the cluster.
      await freeTurn();
      await rememberHeldRevision(run, current);
      return await reapplyWhileHeld(run, artifact, applied, held, gates.blockRevisions);
    }
    if (rollout.kind === 'hold') return await reapplyForRollout(run, artifact, applied, rollout);
    return await succeed(run, artifact, applied, note);
  } catch (error) {
    if (error instanceof LeaseLostError) throw error;
    await freeTurn();
    if (error instanceof PruneLimitHold) return await holdMassPrune(run, error, revision);
    return await fail(run, error, revision);
  } finally {
    // Nothing is sent when the run's end freed it.
    await freeTurn();
  }
}

/** The digest of `revision` (`<tag>@sha256:<hex>` or `sha256:<hex>`). */
function digestOf(revision: string): string {
  return revision.slice(revision.lastIndexOf('sha256:'));
}
