// A run of a delivery with a rollback asked for (`sluice rollback`): it applies the revision the
// rollback returns to, pulled by its digest, through every closed gate that does not hold
// rollback; or it finds a newer push the gates let through, which goes forward instead.
import type { Delivery } from '../config/index.ts';
import { readablePrincipal } from '../access/caller.ts';
import type { GateEvaluation } from '../gates/evaluate.ts';
import { verdictFor } from '../gates/evaluate.ts';
import { waitingMessage } from '../gates/messages.ts';
import { digestOf, rollbackForRun, rollbackHolders, type RollbackForRun } from '../rollback/rules.ts';
import { printable } from '../access/audit-text.ts';
import type { RollbackRequest } from '../model/rollback.ts';
import { pullResolved, resolveArtifact, type Artifact, type Resolved } from '../oci/index.ts';
import { rollbackFromStatusItem } from '../store/rollbacks.ts';
import { applyRevision } from './apply-revision.ts';
import { ClusterBusy, holdForBusyCluster } from './cluster-limit.ts';
import type { ClusterTurn } from './cluster-limit.ts';
import { step } from './guards.ts';
import { hold, succeed, type Run, type ReconcileResult } from './outcomes.ts';

/** `rolled back from B to A by alice (role Oncall, 1234…): INC-77` */
export const rollbackText = (request: RollbackRequest): string =>
  `rolled back from ${request.from} to ${request.to} by ${readablePrincipal(request.by, true)}: ${printable(request.reason)}`;

/** The rollback request the lease's claim read, if it still waits to be settled by a run. */
export function pendingRollback(run: Run): RollbackRequest | undefined {
  const request = rollbackFromStatusItem(run.lease.statusItem);
  return request && request.id !== run.previous?.rollbackSettled ? request : undefined;
}

/**
 * What the run does about the delivery's rollback request, knowing what its source resolves to
 * (`resolved`; undefined when it could not be resolved).
 */
export function rollbackDecision(run: Run, resolved: Resolved | undefined): RollbackForRun {
  return rollbackForRun({
    request: rollbackFromStatusItem(run.lease.statusItem),
    settled: run.previous?.rollbackSettled,
    lastApplied: run.previous?.lastAppliedRevision,
    resolvedDigest: resolved?.digest,
  });
}

/**
 * The run of a delivery (not a rollout's member) with a pending rollback request: the rollback's
 * revision is applied, unless a gate that holds rollback holds it (the run is held, naming it),
 * or a revision pushed since the request is let through by the gates (undefined: the run goes on
 * as any, and settles the request when it applies that one).
 */
export async function rollbackRun(
  run: Run,
  request: RollbackRequest,
  evaluation: GateEvaluation,
  turn: ClusterTurn,
): Promise<ReconcileResult | undefined> {
  const { delivery, deps } = run;
  const credentials = deps.registryCredentials(delivery.source);
  // Only to see whether a newer revision was pushed since: the rollback itself looks no tag up.
  const resolved = await resolveArtifact(delivery.source, { credentials, cache: deps.artifactCache }).catch(
    () => undefined,
  );
  const decision = rollbackDecision(run, resolved);
  run.settleRollback = request;
  if (decision.kind !== 'apply') return undefined;
  if (decision.newer && resolved) {
    const newer = verdictFor(evaluation, resolved.revision);
    if (newer.blockAll.length === 0 && newer.blockRevisions.length === 0) return undefined;
  }
  const target: Resolved = { digest: digestOf(request.to), revision: request.to };
  const holders = rollbackHolders(verdictFor(evaluation, target.revision));
  if (holders.length > 0) {
    const names = holders.map((gate) => `'${gate.name}'`).join(', ');
    return hold(
      run,
      'GateClosed',
      `the rollback of delivery '${delivery.name}' to ${request.to} is held: gate${holders.length === 1 ? '' : 's'} ${names} hold${holders.length === 1 ? 's' : ''} rollbacks too (holds: [revisions, rollback]); ${waitingMessage(holders, request.to)}`,
      { blockedBy: [...holders], pendingRevision: request.to },
      request.to,
    );
  }
  const artifact = await step('ArtifactFailed', () =>
    pullResolved(delivery.source, target, {
      credentials,
      limits: deps.limits,
      cache: deps.artifactCache,
      kmsPublicKeys: deps.kmsPublicKeys,
    }),
  );
  return applyRollback(run, artifact, turn, request);
}

async function applyRollback(
  run: Run,
  artifact: Artifact,
  turn: ClusterTurn,
  request: RollbackRequest,
): Promise<ReconcileResult> {
  let applied;
  try {
    applied = await applyRevision(run, artifact, turn);
  } catch (error) {
    if (error instanceof ClusterBusy) {
      await turn.release().catch(() => undefined);
      return holdForBusyCluster(run, artifact.revision);
    }
    throw error;
  }
  return succeed(run, artifact, applied, keptNote(request, run.delivery));
}

/** What a run at a rollback's revision says: who rolled back from what, and what lifts it. */
export function keptNote(request: RollbackRequest, spec: Delivery): string {
  return `${rollbackText(request)}; ${digestOf(request.from)} stays rolled back while the source (${spec.source.url}) resolves to it: push a newer revision to go forward`;
}
