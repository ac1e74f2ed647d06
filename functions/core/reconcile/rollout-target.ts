// A member of a rollout takes the rollout's revision, not its own tag's: its run resolves the
// rollout's source, starts the next generation when a newer revision may start, computes the
// rollout's state from the table and either takes the digest or is held at its current revision.
import type { Rollout } from '../config/index.ts';
import type { MemberPlace, RolloutOutline } from '../config/rollout-outline.ts';
import type { GateConditionReaders } from '../gates/conditions.ts';
import { gateHolding } from '../gates/evaluate.ts';
import { waitingMessage } from '../gates/messages.ts';
import type { RolloutGeneration } from '../model/rollout.ts';
import type { BlockingGate, DeliveryStatus } from '../model/status.ts';
import { resolveArtifact, verifyResolved, type Resolved } from '../oci/index.ts';
import { memberTurn, rolloutState, rolloutSummary, type RolloutState } from '../rollout/state.ts';
import { generationKey, holdsPlace, markFor, readWaveTallies } from '../rollout/tallies.ts';
import { contributionOf, tallyChange } from '../rollout/tally.ts';
import {
  afterClaim,
  placeInGeneration,
  tallyState,
  wakesAtSoakEndInOrder,
  type TallyState,
} from '../rollout/tally-state.ts';
import type { Fence } from '../store/lease.ts';
import {
  membersBetween,
  placeIn,
  readMembership,
  waveMembersOf,
  type Membership,
  type StoredOutline,
} from '../store/rollout-members.ts';
import { advanceWake, claimPlace } from '../store/rollout-tallies.ts';
import {
  claimRolloutEvent,
  getGeneration,
  getStatuses,
  getStoredOutline,
  listRolloutActions,
  markCompleted,
  recordRolloutAction,
  rejectedDigests,
  startGeneration,
} from '../store/rollouts.ts';
import type { TableClient } from '../store/table-client.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ReconcileResult } from './outcomes.ts';
import type { WaveGateHold } from './release-waiting.ts';
import { announceRollout } from './rollout-events.ts';
import type { RolloutRunEnd } from './rollout-tally-end.ts';

/** What reading a rollout's state needs. */
export interface RolloutReadDeps extends GateConditionReaders {
  readonly db: TableClient;
}

/** The wave gates as they hold `revision`: the gate per wave index, when it holds. */
async function waveGates(
  rollout: { readonly name: string; readonly waves: readonly { readonly gate?: string }[] },
  revision: string,
  deps: RolloutReadDeps,
  now: Date,
): Promise<Map<number, BlockingGate | undefined>> {
  const gates = new Map<number, BlockingGate | undefined>();
  for (const [index, wave] of rollout.waves.entries()) {
    if (!wave.gate) continue;
    const holding = await gateHolding(
      `rollout:${rollout.name}`,
      { name: wave.gate, blocks: 'all' },
      revision,
      deps.db,
      now,
      deps,
    );
    // A gate that is not registered holds, as a delivery's does.
    gates.set(
      index,
      holding === 'unregistered' ? { name: wave.gate, blocks: 'all', problem: 'not registered' } : holding,
    );
  }
  return gates;
}

/** A rollout's state at `now`, computed from the table (and the wave gates' alarms). */
export async function readRolloutState(
  rollout: Rollout,
  deps: RolloutReadDeps,
  now: Date,
  generation?: RolloutGeneration,
): Promise<RolloutState> {
  const current = generation ?? (await getGeneration(deps.db, rollout.name));
  const members = rollout.waves.flatMap((wave) => wave.deliveries);
  const [statuses, actions, gates] = await Promise.all([
    getStatuses(deps.db, members),
    listRolloutActions(deps.db, rollout.name),
    current ? waveGates(rollout, current.revision, deps, now) : new Map<number, BlockingGate | undefined>(),
  ]);
  return rolloutState({ rollout, generation: current, statuses, waveGates: gates, actions, now });
}

/** The member whose run asks: its status under its lease, the fence to take a place with, its run end's rollout record. */
export interface MemberRun {
  readonly previous: DeliveryStatus | undefined;
  readonly fence?: Fence;
  readonly rollout: RolloutRunEnd;
}

/**
 * The state as a member's run needs it, from the waves' tallies (O(waves) items, not the fleet's
 * statuses); recorded as completed when it is.
 */
async function memberState(
  stored: StoredOutline,
  deps: ReconcileDeps,
  now: Date,
  generation: RolloutGeneration,
  member: {
    readonly name: string;
    readonly status: DeliveryStatus | undefined;
    readonly place: MemberPlace | undefined;
  },
): Promise<TallyState> {
  const rollout = stored.outline;
  const claimed = holdsPlace(member.status, rollout.name, generation);
  if (generation.completedAt)
    return tallyState({
      rollout,
      generation,
      tallies: [],
      waveGates: new Map(),
      actions: [],
      now,
      member: { ...member, claimed },
    });
  const [tallies, actions, gates] = await Promise.all([
    readWaveTallies(stored, generation, deps, now),
    listRolloutActions(deps.db, rollout.name),
    waveGates(rollout, generation.revision, deps, now),
  ]);
  const tally = tallyState({
    rollout,
    generation,
    tallies,
    waveGates: gates,
    actions,
    now,
    member: { ...member, claimed },
  });
  if (tally.state.phase === 'Complete') await markCompleted(deps.db, rollout.name, generation, now);
  return tally;
}

/** How a member's run goes on: as any delivery, with the rollout's digest, or held. */
export type RolloutTarget =
  | { readonly kind: 'none' }
  | { readonly kind: 'take'; readonly resolved: Resolved; readonly state: RolloutState }
  | {
      readonly kind: 'hold';
      readonly reason: 'RolloutWaiting' | 'RolloutHalted';
      readonly message: string;
      /** When the wave before its own ends its soak, for the first maxParallel of its wave (its run is retried then). */
      readonly retryAt?: Date;
      readonly pending?: string;
      /** The wave gate holding it, and its wave: the approvers are told (release-waiting.ts). */
      readonly waveGate?: WaveGateHold;
    };

/** The gate holding `delivery`'s wave, when that is what it waits for (its wave is the one under way). */
function waveGateHolding(
  stored: StoredOutline,
  state: RolloutState,
  delivery: string,
  db: TableClient,
): WaveGateHold | undefined {
  const wave = state.activeWave !== undefined ? state.waves[state.activeWave - 1] : undefined;
  if (!wave?.heldBy || state.halt || !state.generation) return undefined;
  const own = wave.members.find((member) => member.name === delivery);
  if (own?.phase !== 'Waiting') return undefined;
  return {
    gate: wave.heldBy,
    wave: { rollout: state.rollout, wave: wave.number, generation: state.generation.generation },
    // A member's run knows its own place only: the approvers are told the wave's members.
    members: () => waveMembersOf(db, stored, wave.number - 1),
  };
}

/** The next generation to start for `resolved`, or undefined when it may not start now. */
function nextGeneration(
  rollout: Pick<RolloutOutline, 'supersede'>,
  resolved: Resolved,
  current: RolloutGeneration | undefined,
  state: RolloutState | undefined,
  now: Date,
  rejected: readonly string[],
): RolloutGeneration | undefined {
  if (current?.digest === resolved.digest) return undefined;
  if (rejected.includes(resolved.digest)) return undefined;
  // A halt a person recorded holds a newer push too, until the resume (or a rollback): only a halt
  // sluice recorded on a failure is superseded by the fix pushed after it.
  if (current && state?.halt?.recorded && !state.halt.automatic) return undefined;
  const finished = state?.phase === 'Complete' || state?.phase === 'Halted';
  // A rollback is not superseded before it finished: the members it did not return yet would keep
  // (and re-apply) the rolled-back digest while they wait for their wave of the newer revision.
  const waits = rollout.supersede === 'wait' || current?.kind === 'rollback';
  if (current && !finished && waits) return undefined;
  const previous =
    current && state?.phase === 'Complete'
      ? { digest: current.digest, revision: current.revision }
      : current?.previous;
  // A halted revision a push supersedes is given up, as a rolled-back one: tagged again, it would
  // go on through the waves (its first waves Ready at it already) without a resume.
  const givenUp = current?.kind === 'rollout' && state?.phase === 'Halted' ? [current.digest] : [];
  const rejecting = [...rejected, ...givenUp];
  return {
    generation: (current?.generation ?? 0) + 1,
    digest: resolved.digest,
    revision: resolved.revision,
    startedAt: now.toISOString(),
    kind: 'rollout',
    startedBy: 'source',
    ...(previous && { previous }),
    ...(rejecting.length > 0 && { rejected: rejecting }),
  };
}

/**
 * The rollout a delivery is a member of and its place (its lookup partition), read at most once
 * however often it is asked; `again` reads it anew (a registration moved its places meanwhile).
 */
export interface RolloutMembership {
  (): Promise<Membership | undefined>;
  /** The answer if a step of the run asked already, else undefined: no request of its own. */
  readonly asked: () => Promise<Membership | undefined> | undefined;
  readonly again: () => Promise<Membership | undefined>;
}

/** A delivery's membership, looked up on the first ask: a run asks when it resolves and when it follows. */
export function rolloutMembership(db: TableClient, delivery: string): RolloutMembership {
  let lookup: Promise<Membership | undefined> | undefined;
  return Object.assign(() => (lookup ??= readMembership(db, delivery)), {
    asked: () => lookup,
    again: () => (lookup = readMembership(db, delivery)),
  });
}

/**
 * The member's rollout as stored (its outline) and its place in it. A place missing from the
 * layout the spec names is looked up once more: the lookup was read before a registration that
 * wrote the spec after it.
 */
async function memberOf(
  db: TableClient,
  delivery: string,
  membership: RolloutMembership,
): Promise<{ readonly stored: StoredOutline; readonly place: MemberPlace | undefined } | undefined> {
  const found = await membership();
  const stored = found && (await getStoredOutline(db, found.rollout));
  if (!stored) return undefined;
  const place = placeIn(stored, found, delivery);
  if (place || stored.legacy) return { stored, place };
  return { stored, place: placeIn(stored, await membership.again(), delivery) };
}

/**
 * For a delivery in a rollout: the rollout's revision if the delivery may take it now, else why it
 * is held (its current revision stays). Starts the next generation when the source has a newer
 * revision that may start, and records a halt the state shows that no action records yet.
 */
export async function rolloutTarget(
  delivery: string,
  deps: ReconcileDeps,
  now: Date,
  membership: RolloutMembership = rolloutMembership(deps.db, delivery),
  run: MemberRun = { previous: undefined, rollout: {} },
): Promise<RolloutTarget> {
  const found = await memberOf(deps.db, delivery, membership);
  if (!found) return { kind: 'none' };
  const { stored, place } = found;
  const rollout = stored.outline;
  let generation = await getGeneration(deps.db, rollout.name);
  const credentials = deps.registryCredentials(rollout.source);
  const resolved = await resolveArtifact(rollout.source, { credentials, cache: deps.artifactCache })
    .then(async (found) => {
      // Members pull the digest with their own sources: the rollout's `verify` is checked here,
      // before a generation of it can start.
      if (found.digest !== generation?.digest)
        await verifyResolved(rollout.source, found, {
          credentials,
          cache: deps.artifactCache,
          kmsPublicKeys: deps.kmsPublicKeys,
          notation: deps.notation,
        });
      return found;
    })
    .catch((error: unknown) => {
      // Without a revision there is nothing to roll out; with one, the rollout goes on with it.
      if (!generation) throw error;
      deps.log?.(`rollout '${rollout.name}': could not resolve its source: ${String(error)}`);
      return undefined;
    });
  const member = () => ({ name: delivery, status: run.rollout.stored ?? run.previous, place });
  let tally = generation ? await memberState(stored, deps, now, generation, member()) : undefined;
  let state = tally?.state;
  // A rollout added again remembers what was rolled back before it was removed.
  const rejected = generation ? (generation.rejected ?? []) : await rejectedDigests(deps.db, rollout.name);
  const next = resolved && nextGeneration(rollout, resolved, generation, state, now, rejected);
  if (next) {
    if (!(await startGeneration(deps.db, rollout.name, next, generation)))
      deps.log?.(`rollout '${rollout.name}': another run started a generation first`);
    generation = await getGeneration(deps.db, rollout.name);
    tally = generation && (await memberState(stored, deps, now, generation, member()));
    state = tally?.state;
    if (state)
      await announceRollout(rollout, state, { db: deps.db, events: deps.events, log: deps.log }, now);
  }
  if (!generation && resolved && rejected.includes(resolved.digest))
    return {
      kind: 'hold',
      reason: 'RolloutHalted',
      message: `rollout '${rollout.name}': ${resolved.revision} was rolled back before: it is not rolled out again; push a newer revision`,
    };
  if (!tally || !state || !generation) return { kind: 'none' };
  const current = generation;
  if (state.halt && !state.halt.recorded) {
    tally = await recordHalt(rollout, state, deps, now, () =>
      memberState(stored, deps, now, current, member()),
    );
    state = tally.state;
    // A held member's run is not followed: the halt it found is announced here.
    await announceRollout(rollout, state, { db: deps.db, events: deps.events, log: deps.log }, now);
  }
  if (tally.turn === 'claim' && tally.wave >= 0) {
    // One of the wave's maxParallel places, taken before the digest (given back once Ready at it).
    const stored = member().status;
    const mark = markFor(rollout.name, generation, tally.wave, true);
    const claimed = { ...stored, rolloutMark: mark } as DeliveryStatus;
    const change = tallyChange(contributionOf(stored, mark), contributionOf(claimed, mark));
    const took = run.fence ? await claimPlace(deps.db, run.fence, mark, change, rollout.maxParallel!) : false;
    if (took) {
      run.rollout.stored = claimed;
      tally = afterClaim(tally, delivery);
      state = tally.state;
    }
  }
  // The run end counts its status toward this generation, in its wave's tally.
  if (tally.wave >= 0)
    run.rollout.mark = markFor(
      rollout.name,
      generation,
      tally.wave,
      holdsPlace(member().status, rollout.name, generation),
    );
  const turn = memberTurn(state, delivery);
  if (turn.take)
    return { kind: 'take', resolved: { digest: generation.digest, revision: generation.revision }, state };
  const waitingFor =
    !turn.halted && wakesAtSoakEndInOrder(rollout, state, placeInGeneration(rollout, generation, place))
      ? new Date(state.nextAt!)
      : undefined;
  const superseded =
    resolved && resolved.digest !== generation.digest
      ? generation.rejected?.includes(resolved.digest)
        ? `; ${resolved.revision} was halted or rolled back before: it is not rolled out again (push a newer revision)`
        : state.halt?.recorded && !state.halt.automatic
          ? `; ${resolved.revision} waits for the resume: a push does not lift a halt a person recorded`
          : `; ${resolved.revision} waits for it`
      : '';
  const waveGate = turn.halted ? undefined : waveGateHolding(stored, state, delivery, deps.db);
  const gateWhy = waveGate ? `; ${waitingMessage([waveGate.gate], generation.revision)}` : '';
  return {
    kind: 'hold',
    reason: turn.halted ? 'RolloutHalted' : 'RolloutWaiting',
    message: `${turn.why}${gateWhy}${superseded}`,
    ...(waitingFor && { retryAt: waitingFor }),
    pending: generation.revision,
    ...(waveGate && { waveGate }),
  };
}

/**
 * Records the halt the state found (sluice's own action): it outlasts the failure, until a resume.
 * Only if no action was recorded since the state was read (a resume meanwhile wins); the state
 * after it is read again either way (`again`).
 */
async function recordHalt<T>(
  rollout: Pick<Rollout, 'name'>,
  state: RolloutState,
  deps: ReconcileDeps,
  now: Date,
  again: () => Promise<T>,
): Promise<T> {
  const halt = state.halt!;
  const recorded = await recordRolloutAction(
    deps.db,
    rollout.name,
    {
      action: 'halt',
      generation: state.generation!.generation,
      at: now.toISOString(),
      by: 'sluice',
      verified: true,
      reason: halt.why,
      wave: halt.wave,
      ...(halt.delivery && { delivery: halt.delivery }),
      automatic: true,
    },
    state.actionsSeen,
  );
  if (recorded) deps.log?.(`rollout '${rollout.name}' halted: ${rolloutSummary(state)}`);
  else deps.log?.(`rollout '${rollout.name}': another action was recorded first; its state is read again`);
  return again();
}

/**
 * While a wave soaks: arranges the retry of the next wave's first members at the soak's end, once
 * per soak end (the first run that sees it), so the next wave starts on time even if none of its
 * members runs during the soak. Their own held runs arrange the same schedule (same name: one).
 */
async function wakeAtSoakEnd(stored: StoredOutline, state: RolloutState, deps: ReconcileDeps): Promise<void> {
  const rollout = stored.outline;
  if (!state.nextAt || !deps.retryTimer || !state.generation || state.activeWave === undefined) return;
  const key = `${state.generation.generation}#soak-end#${state.nextAt}`;
  if (!(await claimRolloutEvent(deps.db, rollout.name, key))) return;
  const next = await membersToWake(
    deps.db,
    stored,
    state.generation,
    state.activeWave,
    0,
    rollout.maxParallel ?? Infinity,
  );
  const at = new Date(state.nextAt);
  for (const member of next)
    await deps.retryTimer
      .retryAt(member, at)
      .catch((error: unknown) =>
        deps.log?.(`could not arrange the soak-end retry of '${member}': ${String(error)}`),
      );
}

/**
 * The members of the wave under way whose turn came and that no run woke yet, in the wave's order:
 * up to as many past the Ready ones as maxParallel allows (every member without a limit, and in a
 * rollback), each taken once by moving the wave's wake-up cursor. So the first run after a soak's
 * end wakes the next wave's first members once more (should that schedule be lost), and each
 * member that becomes Ready wakes the next. A member whose wake-up is lost, or that found no free
 * place when woken, takes the digest at its own next run.
 */
async function wakeNext(stored: StoredOutline, state: RolloutState, deps: ReconcileDeps): Promise<string[]> {
  const rollout = stored.outline;
  const generation = state.generation;
  if (!generation || state.activeWave === undefined) return [];
  const index = state.activeWave - 1;
  const wave = state.waves[index];
  if (!wave?.counts || wave.heldBy || wave.soakEndsAt || wave.phase === 'Complete') return [];
  const limit =
    generation.kind === 'rollback' || rollout.maxParallel === undefined ? Infinity : rollout.maxParallel;
  const upTo = Math.min(wave.counts.size, wave.counts.ready + limit);
  const moved = await advanceWake(deps.db, generationKey(rollout.name, generation), index, upTo);
  return moved ? membersToWake(deps.db, stored, generation, index, moved.from, moved.to) : [];
}

/**
 * The members of the generation's wave `wave` (0-based) at positions `from` to `upTo` in its
 * order (a rollback's one wave is every member): one Query of as many items.
 */
function membersToWake(
  db: TableClient,
  stored: StoredOutline,
  generation: RolloutGeneration,
  wave: number,
  from: number,
  upTo: number,
): Promise<string[]> {
  const waves = stored.outline.waves;
  const offset =
    generation.kind === 'rollback' ? 0 : waves.slice(0, wave).reduce((sum, w) => sum + w.size, 0);
  const size =
    generation.kind === 'rollback' ? waves.reduce((sum, w) => sum + w.size, 0) : (waves[wave]?.size ?? 0);
  return membersBetween(db, stored, offset + from, offset + Math.min(upTo, size));
}

/**
 * After a member's run: records a halt it caused, publishes the rollout's events it shows
 * (rollout-events.ts), and reconciles the members whose turn came (wakeNext), each once. A member
 * whose wake-up is lost takes the digest at its own next run: the state is computed, not carried
 * by events.
 */
export async function followRollout(
  delivery: string,
  deps: ReconcileDeps,
  result?: Pick<ReconcileResult, 'outcome' | 'revision'>,
  membership: RolloutMembership = rolloutMembership(deps.db, delivery),
): Promise<void> {
  const found = await membership();
  const stored = found && (await getStoredOutline(deps.db, found.rollout));
  if (!stored) return;
  const rollout = stored.outline;
  const now = deps.clock.now();
  const generation = await getGeneration(deps.db, rollout.name);
  if (!generation) return;
  // A run that applied another digest than the generation's (a generation, such as a rollback,
  // started while it applied the one it had taken, and its lease held off that one's reconcile)
  // is reconciled again, now that its lease is free: it does not keep the replaced digest.
  const applied = result?.outcome === 'Succeeded' ? result.revision : undefined;
  const stale = applied !== undefined && !applied.endsWith(generation.digest);
  // Completed before this run: every member takes the digest by itself, there is no one to wait for.
  if (generation.completedAt) {
    if (stale) await deps.reconcileNow?.([delivery]);
    return;
  }
  // The state as any member sees it (the follower's own place does not matter here).
  const read = async () =>
    (
      await memberState(stored, deps, now, generation, {
        name: delivery,
        status: undefined,
        place: undefined,
      })
    ).state;
  let state = await read();
  if (state.halt && !state.halt.recorded) state = await recordHalt(rollout, state, deps, now, read);
  await announceRollout(rollout, state, { db: deps.db, events: deps.events, log: deps.log }, now);
  if (state.halt) return;
  await wakeAtSoakEnd(stored, state, deps);
  if (!deps.reconcileNow) return;
  const woken = (await wakeNext(stored, state, deps)).filter((member) => member !== delivery);
  const again = stale ? [delivery] : [];
  if (woken.length + again.length > 0) await deps.reconcileNow([...again, ...woken]);
}
