// How a run ends, recorded: its status and event, the holds (gates, dependencies, the
// mass-deletion brake), and what it sets in motion (the retry of a failure, the deliveries waiting on a success).
import type { Delivery } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { waitingMessage } from '../gates/messages.ts';
import { keptMessage, type KeptContainer } from '../kube/cascade.ts';
import { ANNOTATION_REVISION, type Artifact } from '../oci/index.ts';
import { type ReconcileOutcome } from '../store/events.ts';
import { recordRunEnd } from '../store/run-end.ts';
import { appliedRevisionWrites } from '../store/applied-revisions.ts';
import type { RollbackRequest } from '../model/rollback.ts';
import { digestOf } from '../rollback/rules.ts';
import type { ClusterSlot } from '../store/cluster-slots.ts';
import { PendingWrites, type Lease } from '../store/lease.ts';
import {
  statusFromItem,
  type BlockingGate,
  type ChangeCounts,
  type DeliveryStatus,
  type StatusReason,
  type StatusUpdate,
} from '../store/status.ts';
import {
  dependencyMessage,
  isUpToDate,
  soakEnd,
  waitingDependents,
  type UnreadyDependency,
} from './depends-on.ts';
import type { ReconcileDeps } from './deps.ts';
import type { PruneLimitHold } from './prune-limit.ts';
import { announceWaiting, announceWaveWaiting, type WaveGateHold } from './release-waiting.ts';
import { retryTime } from './retry.ts';
import { runEndTally, type RolloutRunEnd } from './rollout-tally-end.ts';

/** Why a run was skipped: nothing was touched. */
export type SkipReason = 'LeaseHeld' | 'LeaseLost' | 'Suspended';

export interface ReconcileResult {
  readonly delivery: string;
  /** `Skipped`: another run held the lease, or the delivery is suspended; nothing was touched. */
  readonly outcome: ReconcileOutcome | 'Skipped';
  readonly reason: StatusReason | SkipReason;
  readonly message: string;
  readonly revision?: string;
  readonly changes?: ChangeCounts;
  /** A failed or held run's scheduled retry. */
  readonly nextRetryAt?: string;
  /** A held (Blocked) run: since when the delivery has been held, as its status records it. */
  readonly blockedSince?: string;
  /**
   * A held run whose every closed gate is closed only by a planned period (a freeze, a calendar
   * event, a CLOSED Change Calendar) or by its own schedule's close: the blocked-too-long alarm
   * does not count it.
   */
  readonly planned?: boolean;
  /**
   * A held run that is not planned: since when the delivery has been held by something unplanned
   * (the first run that found it so, after any planned hold), which the blocked-too-long alarm counts from.
   */
  readonly unplannedBlockedSince?: string;
  /** CRDs and Namespaces the run left out but kept, as they hold objects it does not delete. */
  readonly kept?: readonly KeptContainer[];
  /** When a run of the delivery last succeeded (this one, if it did), if ever. */
  readonly lastSuccessAt?: string;
  /** The rollout the delivery is a member of, when the run looked it up (every run that reached its revision). */
  readonly rollout?: string;
  /** The revision running: applied by this run, or by the last run that applied one. */
  readonly appliedRevision?: string;
  /** A held run: the revision it holds back (not running). */
  readonly heldRevision?: string;
}

/** What a run that applied its revision did. */
export interface Applied {
  readonly changes: ChangeCounts;
  /** CRDs and Namespaces the revision left out, kept because they hold objects not pruned. */
  readonly kept: readonly KeptContainer[];
}

/** One run of a delivery under its lease: what every ending needs, the status read once. */
export interface Run {
  readonly delivery: Delivery;
  readonly deps: ReconcileDeps;
  readonly started: Date;
  /** The status as the previous run left it. */
  readonly previous: DeliveryStatus | undefined;
  /** The run's lease: its fence conditions every table write; the write recording the run's end releases it. */
  readonly lease: Lease;
  /** Writes that go with the run's next fenced write (the desired set). */
  readonly pending: PendingWrites;
  /** The run's turn on its cluster: the slot it took, if any, is freed by that write too. */
  readonly turn?: { held(): Pick<ClusterSlot, 'freeing' | 'freed'> | undefined };
  /** A rollout member's: what its run end adds to its wave's tally (rollout-tally-end.ts). */
  readonly rollout: RolloutRunEnd;
  /**
   * The rollback request this run settles when it leaves the revision the request rolls back
   * from (rollback-run.ts): its id is written with the status that records the new revision.
   */
  settleRollback?: RollbackRequest;
}

/** Starts a run with the status the previous run left, as the lease's claim read it. */
export function startRun(delivery: Delivery, deps: ReconcileDeps, lease: Lease, turn?: Run['turn']): Run {
  const previous = statusFromItem(lease.statusItem);
  const pending = new PendingWrites();
  return {
    delivery,
    deps,
    started: deps.clock.now(),
    previous,
    lease,
    pending,
    rollout: {},
    ...(turn && { turn }),
  };
}

/**
 * Schedules the retry of a failed run (`retryInterval`) or of a held one (at `at`), unless a retry
 * is already pending: a failed interval or push run between retries must not start a second chain
 * of them. A retry that cannot be scheduled is logged, not fatal: the next regular run retries anyway.
 */
export async function scheduleRetry(
  run: Run,
  at: Date | undefined = retryTime(run.delivery, run.deps.clock.now()),
): Promise<string | undefined> {
  const { delivery, deps } = run;
  if (!at || !deps.retryTimer) return undefined;
  const pending = run.previous?.nextRetryAt;
  if (pending && Date.parse(pending) > deps.clock.now().getTime()) return pending;
  try {
    return (await deps.retryTimer.retryAt(delivery.name, at)).toISOString();
  } catch (error) {
    deps.log?.(`could not schedule the retry of '${delivery.name}': ${String(error)}`);
    return undefined;
  }
}

/** The previous run's record of the last success, for the result. */
const lastSuccessOf = (run: Run) =>
  run.previous?.lastSuccessAt ? { lastSuccessAt: run.previous.lastSuccessAt } : {};

/** When the delivery was first held, in this run or an earlier one still holding it. */
const heldSince = (run: Run): string => run.previous?.blockedSince ?? run.started.toISOString();

/**
 * When the delivery was first held by something unplanned, in this run or an earlier one still
 * holding it so: a planned hold before it (a freeze that ended while an approval gate still holds)
 * does not count. A status written before this was recorded counts from its blockedSince, unless
 * that hold was planned.
 */
function unplannedHeldSince(run: Run): string {
  const previous = run.previous;
  if (previous?.unplannedBlockedSince) return previous.unplannedBlockedSince;
  if (previous?.blockedSince && !plannedOnly(previous.blockedBy)) return previous.blockedSince;
  return run.started.toISOString();
}

/**
 * Every gate holding the run is closed by a planned period or its own schedule's close only
 * (No-Deploy-Friday), none by an alarm, a problem or a person.
 */
const plannedOnly = (blockedBy: readonly BlockingGate[] | null | undefined): boolean =>
  !!blockedBy &&
  blockedBy.length > 0 &&
  blockedBy.every(
    (gate) =>
      (gate.closedBy !== undefined || gate.closedBySchedule === true) &&
      !gate.closedByAlarms?.length &&
      gate.problem === undefined,
  );

/**
 * Records a run that changed nothing because something holds it (`reason`), and answers with the
 * result: status not ready, held since it first was, and the event.
 */
export async function hold(
  run: Run,
  reason: StatusReason,
  message: string,
  status: Omit<StatusUpdate, 'ready' | 'reason' | 'message' | 'blockedSince' | 'unplannedBlockedSince'>,
  revision?: string,
): Promise<ReconcileResult> {
  const blockedSince = heldSince(run);
  const planned = plannedOnly(status.blockedBy);
  const unplannedBlockedSince = planned ? undefined : unplannedHeldSince(run);
  if (status.blockedBy) await catchUpWhenPeriodsEnd(run, status.blockedBy);
  const notReady = { readySince: null, soakingUntil: null };
  await finish(run, 'Blocked', {
    ...notReady,
    ...status,
    ready: false,
    reason,
    message,
    blockedSince,
    unplannedBlockedSince: unplannedBlockedSince ?? null,
  });
  if (status.blockedBy)
    await announceWaiting(run.delivery.name, run.previous, status.blockedBy, revision, run.deps);
  const applied =
    (typeof status.lastAppliedRevision === 'string' ? status.lastAppliedRevision : undefined) ??
    run.previous?.lastAppliedRevision;
  return {
    delivery: run.delivery.name,
    outcome: 'Blocked',
    reason,
    message,
    blockedSince,
    ...(planned ? { planned: true } : { unplannedBlockedSince }),
    ...(revision && { revision }),
    ...(applied && { appliedRevision: applied }),
    ...(revision && revision !== applied && { heldRevision: revision }),
    ...(typeof status.nextRetryAt === 'string' && { nextRetryAt: status.nextRetryAt }),
    ...lastSuccessOf(run),
  };
}

/**
 * For each gate held closed by a freeze, calendar event or Change Calendar whose end is known,
 * the catch-up when it ends: the gate's one-time schedule (`gateOpened`), as for a window's end,
 * shared by every delivery using the gate. Arranged once: a gate an earlier run of this delivery
 * already recorded as opening then is left alone. One that cannot be scheduled is logged, not
 * fatal: the delivery interval is the backstop.
 */
async function catchUpWhenPeriodsEnd(run: Run, blocking: readonly BlockingGate[]): Promise<void> {
  const { deps, previous } = run;
  if (!deps.gateTimer) return;
  for (const gate of blocking) {
    if (!gate.closedBy || !gate.opensAt) continue;
    const known = previous?.blockedBy?.some(
      (before) => before.name === gate.name && before.closedBy && before.opensAt === gate.opensAt,
    );
    if (known) continue;
    await deps.gateTimer
      .reopenAt(gate.name, new Date(gate.opensAt))
      .catch((error: unknown) =>
        deps.log?.(
          `could not schedule the catch-up of gate '${gate.name}' at ${gate.opensAt}: ${String(error)}`,
        ),
      );
  }
}

/** Records a run held by closed gates: nothing was applied or pruned. */
export function block(
  run: Run,
  blocking: readonly BlockingGate[],
  pending?: string,
): Promise<ReconcileResult> {
  return hold(
    run,
    'GateClosed',
    waitingMessage(blocking, pending),
    { blockedBy: [...blocking], ...(pending && { pendingRevision: pending }) },
    pending,
  );
}

/**
 * Records a run held until the deliveries it depends on are ready: nothing was applied or pruned.
 * Held only by soaks, it is retried when the last one ends (a one-time schedule; the interval is
 * the backstop); held by a dependency that is not Ready, it follows that one's success.
 */
export async function waitForDependencies(
  run: Run,
  unready: readonly UnreadyDependency[],
): Promise<ReconcileResult> {
  const soaked = soakEnd(unready);
  const nextRetryAt = soaked && (await scheduleRetry(run, soaked));
  return hold(run, 'DependencyNotReady', dependencyMessage(unready), {
    blockedBy: null,
    soakingUntil: soaked?.toISOString() ?? null,
    nextRetryAt: nextRetryAt ?? null,
  });
}

/** Why a rollout holds a member at its revision, and when to try again. */
export interface RolloutHold {
  readonly reason: 'RolloutWaiting' | 'RolloutHalted';
  readonly message: string;
  /** When the wave it waits for ends its soak. */
  readonly retryAt?: Date;
  /** The rollout's revision it does not take yet. */
  readonly pending?: string;
  /** The wave gate holding it: its approvers are told, once for the wave. */
  readonly waveGate?: WaveGateHold;
}

/** Tells the approvers of the wave gate holding the run (once for the wave: release-waiting.ts). */
async function announceWaveGate(run: Run, held: RolloutHold): Promise<void> {
  if (held.waveGate && held.pending)
    await announceWaveWaiting(run.delivery.name, held.waveGate, held.pending, run.deps);
}

/**
 * Records a run held by its rollout (its wave has not started, its turn in the wave has not come,
 * or the rollout is halted): nothing was applied or pruned, its current revision stays. Held until
 * a soak ends, it is retried then; otherwise the rollout's progress reconciles it.
 */
export async function holdForRollout(run: Run, held: RolloutHold): Promise<ReconcileResult> {
  const nextRetryAt = held.retryAt && (await scheduleRetry(run, held.retryAt));
  const result = await hold(
    run,
    held.reason,
    held.message,
    { blockedBy: null, nextRetryAt: nextRetryAt ?? null, pendingRevision: held.pending ?? null },
    held.pending,
  );
  await announceWaveGate(run, held);
  return result;
}

/**
 * Records a run that re-applied the revision applied last (drift corrected) while its rollout
 * holds it (its wave or turn has not come, or the rollout is halted), as a freeze does.
 */
export async function reapplyForRollout(
  run: Run,
  artifact: Artifact,
  { changes, kept }: Applied,
  held: RolloutHold,
): Promise<ReconcileResult> {
  const nextRetryAt = held.retryAt && (await scheduleRetry(run, held.retryAt));
  const message = withKept(`re-applied ${artifact.revision} (drift corrected); ${held.message}`, kept);
  const result = await hold(
    run,
    held.reason,
    message,
    {
      blockedBy: null,
      nextRetryAt: nextRetryAt ?? null,
      lastAppliedRevision: artifact.revision,
      lastAppliedOriginRevision: originRevisionOf(artifact),
      lastAppliedSignedBy: artifact.signedBy ?? null,
      pendingRevision: held.pending ?? null,
      inventorySize: inventorySizeOf(changes),
      changes,
      kept: keptStatus(kept),
    },
    held.pending,
  );
  await announceWaveGate(run, held);
  return { ...result, changes, ...(kept.length > 0 && { kept }) };
}

/**
 * Records a run held by the mass-deletion brake (PruneLimitExceeded, possibly behind a closed
 * gate) before it changed anything. Nothing was applied or pruned.
 */
export function holdMassPrune(
  run: Run,
  held: PruneLimitHold,
  revision: string | undefined,
): Promise<ReconcileResult> {
  const gate = held.gate;
  return hold(
    run,
    held.reason,
    held.message,
    { lastAttemptedRevision: revision, pendingRevision: revision ?? null, blockedBy: gate ? [gate] : null },
    revision,
  );
}

/** The Git revision the artifact was pushed from (`org.opencontainers.image.revision`), or null to clear it. */
const originRevisionOf = (artifact: Artifact): string | null =>
  artifact.annotations[ANNOTATION_REVISION] ?? null;

const inventorySizeOf = (changes: ChangeCounts) => changes.created + changes.configured + changes.unchanged;

/** The status fields of the kept containers: their names and first objects, or null to clear them. */
const keptStatus = (kept: readonly KeptContainer[]) =>
  kept.length > 0
    ? kept.map(({ container, objects }) => ({ container, objects: objects.slice(0, 5) }))
    : null;

/** `message`, followed by what was kept and why. */
const withKept = (message: string, kept: readonly KeptContainer[]) =>
  kept.length > 0 ? `${message}; ${keptMessage(kept)}` : message;

/**
 * Records a run that re-applied the revision applied last (drift corrected) while a freeze
 * (`blocks: revisions`) holds the newer `held` one.
 */
export async function reapplyWhileHeld(
  run: Run,
  artifact: Artifact,
  { changes, kept }: Applied,
  held: string,
  blocking: readonly BlockingGate[],
): Promise<ReconcileResult> {
  const message = withKept(
    `re-applied ${artifact.revision} (drift corrected); revision ${held} is held: ${waitingMessage(blocking, held)}`,
    kept,
  );
  const result = await hold(
    run,
    'GateClosed',
    message,
    {
      blockedBy: [...blocking],
      lastAppliedRevision: artifact.revision,
      lastAppliedOriginRevision: originRevisionOf(artifact),
      lastAppliedSignedBy: artifact.signedBy ?? null,
      lastAttemptedRevision: held,
      pendingRevision: held,
      inventorySize: inventorySizeOf(changes),
      changes,
      kept: keptStatus(kept),
    },
    held,
  );
  return { ...result, changes, ...(kept.length > 0 && { kept }) };
}

/**
 * Records a run that applied its revision. A steady-state run (nothing changed, the delivery as
 * the last run left it) records its status quietly, without an event. When the delivery was not
 * ready before, the deliveries waiting on it reconcile at once.
 */
export async function succeed(
  run: Run,
  artifact: Artifact,
  { changes, kept }: Applied,
  note?: string,
): Promise<ReconcileResult> {
  const { previous } = run;
  const message = withKept(`Applied revision: ${artifact.revision}${note ? `; ${note}` : ''}`, kept);
  const lastSuccessAt = run.deps.clock.now().toISOString();
  // Ready at this revision since the first run that found it so (what a dependent's soak counts from).
  const stillReady = previous?.ready === true && previous.lastAppliedRevision === artifact.revision;
  const readySince = stillReady
    ? (previous.readySince ?? previous.lastSuccessAt ?? lastSuccessAt)
    : lastSuccessAt;
  const steady =
    kept.length === 0 &&
    changes.created + changes.configured + changes.deleted === 0 &&
    previous?.ready === true &&
    previous.reason === 'ReconciliationSucceeded' &&
    previous.lastAppliedRevision === artifact.revision &&
    (previous.lastAppliedOriginRevision ?? null) === originRevisionOf(artifact);
  await finish(
    run,
    'Succeeded',
    {
      ready: true,
      reason: 'ReconciliationSucceeded',
      message,
      lastAppliedRevision: artifact.revision,
      lastAppliedOriginRevision: originRevisionOf(artifact),
      lastAppliedSignedBy: artifact.signedBy ?? null,
      lastAttemptedRevision: artifact.revision,
      inventorySize: inventorySizeOf(changes),
      changes,
      lastSuccessAt,
      readySince,
      soakingUntil: null,
      blockedBy: null,
      blockedSince: null,
      unplannedBlockedSince: null,
      pendingRevision: null,
      kept: keptStatus(kept),
    },
    { quiet: steady },
  );
  // Deliveries can only be waiting on this one if it was not ready before this run.
  if (!isUpToDate(previous)) await reconcileWaitingDependents(run.delivery.name, run.deps);
  return {
    delivery: run.delivery.name,
    outcome: 'Succeeded',
    reason: 'ReconciliationSucceeded',
    message,
    revision: artifact.revision,
    appliedRevision: artifact.revision,
    changes,
    ...(kept.length > 0 && { kept }),
    lastSuccessAt,
  };
}

/** Records a failed run, with the step's reason, and schedules its retry (`retryInterval`). */
export async function fail(run: Run, error: unknown, revision: string | undefined): Promise<ReconcileResult> {
  // A failure may quote the API server, which may quote any Secret the delivery owns.
  await run.deps.taint?.learned();
  const scrubbed = run.deps.taint ? run.deps.taint.scrubError(error) : error;
  const failure =
    scrubbed instanceof SluiceError
      ? scrubbed
      : new SluiceError('ApplyFailed', String(scrubbed), { cause: scrubbed });
  const nextRetryAt = await scheduleRetry(run);
  await finish(run, 'Failed', {
    ready: false,
    reason: failure.reason,
    message: failure.message,
    lastAttemptedRevision: revision,
    blockedBy: null,
    blockedSince: null,
    unplannedBlockedSince: null,
    readySince: null,
    soakingUntil: null,
    nextRetryAt: nextRetryAt ?? null,
  });
  return {
    delivery: run.delivery.name,
    outcome: 'Failed',
    reason: failure.reason,
    message: failure.message,
    revision,
    ...(run.previous?.lastAppliedRevision && { appliedRevision: run.previous.lastAppliedRevision }),
    ...(nextRetryAt && { nextRetryAt }),
    ...lastSuccessOf(run),
  };
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

/**
 * Records how a run ended: the status, and unless `quiet` (a run that changed nothing and found
 * the delivery as the last one left it: Flux too emits no event then) the event, in the table
 * and on the event bus. The same table write stores what the run kept for it (its desired set),
 * frees its cluster slot and releases the lease: what follows (the event bus, the dependents)
 * writes nothing under it.
 */
async function finish(
  run: Run,
  outcome: ReconcileOutcome,
  status: StatusUpdate,
  options: { readonly quiet?: boolean } = {},
): Promise<void> {
  const { deps, delivery, started } = run;
  const now = deps.clock.now();
  // The last scrub before the table and the event bus (fail() scrubbed already; holds name objects).
  if (deps.taint) status = { ...status, message: status.message && deps.taint.scrub(status.message) };
  // A member of a rollout: its status's mark, and the change to its wave's tally in the same write.
  const { fields: update, tally } = runEndTally(deps.db, delivery.name, run.rollout, run.previous, {
    // A retry is only pending after a failed or held run, which sets it.
    nextRetryAt: null,
    ...status,
    lastReconcileAt: now.toISOString(),
    durationMs: now.getTime() - started.getTime(),
  });
  const event = options.quiet
    ? undefined
    : {
        delivery: delivery.name,
        outcome,
        reason: status.reason,
        message: status.message,
        revision: status.lastAttemptedRevision,
        ...(status.lastAppliedOriginRevision && { originRevision: status.lastAppliedOriginRevision }),
        ...((status.kept?.length ?? 0) > 0 && { type: 'Warning' as const }),
        time: now.toISOString(),
      };
  const slot = run.turn?.held();
  // A change of the applied revision is recorded in the delivery's applied revisions (what a rollback may return to).
  const appliedNow = typeof status.lastAppliedRevision === 'string' ? status.lastAppliedRevision : undefined;
  const history = appliedNow
    ? appliedRevisionWrites(
        deps.db,
        delivery.name,
        delivery.source.url,
        run.previous?.lastAppliedRevision,
        appliedNow,
        now,
      )
    : [];
  const settle = run.settleRollback;
  const settled =
    settle && appliedNow && digestOf(appliedNow) !== digestOf(settle.from)
      ? { rollbackSettled: settle.id }
      : {};
  const written = await recordRunEnd(
    deps.db,
    { name: delivery.name, status: { ...update, ...settled }, event },
    run.lease.fence,
    {
      also: [...run.pending.take(), ...history],
      releaseLease: true,
      ...(slot && { freeSlot: slot.freeing }),
      ...(tally && { tally }),
    },
  );
  if (written.leaseReleased) run.lease.released();
  if (written.slotFreed) slot?.freed();
  if (!event) return;
  await deps.events
    ?.publish(event)
    .catch((error: unknown) => deps.log?.(`could not publish the reconcile event: ${String(error)}`));
}
