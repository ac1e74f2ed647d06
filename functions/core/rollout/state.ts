// A rollout's state, computed from what the table holds: its generation (the digest), each
// member's status, the wave gates and the halts and resumes. Nothing in it is remembered from an
// earlier evaluation, so an event lost on the way can delay a wave but never skip one.
import type { Rollout, RolloutWave } from '../config/index.ts';
import type { RolloutAction, RolloutGeneration } from '../model/rollout.ts';
import type { BlockingGate, DeliveryStatus, StatusReason } from '../model/status.ts';

/** What is read to compute a rollout's state. */
export interface RolloutInputs {
  readonly rollout: Rollout;
  /** The generation being rolled out; none before the first revision was resolved. */
  readonly generation: RolloutGeneration | undefined;
  /** Each member's status (absent: never reconciled). */
  readonly statuses: ReadonlyMap<string, DeliveryStatus | undefined>;
  /** Per wave index with a gate: the gate as it holds the generation's revision, or undefined when it lets it through. */
  readonly waveGates: ReadonlyMap<number, BlockingGate | undefined>;
  /** The halts and resumes recorded (those of other generations are passed over). */
  readonly actions: readonly RolloutAction[];
  readonly now: Date;
}

/** Where one member stands in the generation. */
export type MemberPhase =
  /** Ready at the digest (and soaked, if its wave has a soak). */
  | 'Done'
  /** Ready at the digest, its wave's soak still running. */
  | 'Soaking'
  /** Took the digest, not Ready yet (applying, held by its cluster's limit, …). */
  | 'Progressing'
  /** Failed at the digest: halts the rollout. */
  | 'Failed'
  /** May take the digest now. */
  | 'Admitted'
  /** Keeps its current revision: its wave has not started, or its turn in the wave has not come. */
  | 'Waiting';

export interface MemberView {
  readonly name: string;
  readonly phase: MemberPhase;
  /** Why, in a few words (the failure, the soak's end, what it waits for). */
  readonly why?: string;
}

export type WavePhase = 'Complete' | 'Soaking' | 'Progressing' | 'Gated' | 'Pending';

export interface WaveView {
  /** 1-based, as people count waves. */
  readonly number: number;
  readonly phase: WavePhase;
  readonly members: readonly MemberView[];
  /** While soaking: when the last member's soak ends. */
  readonly soakEndsAt?: string;
  /** The wave's gate, while it holds the wave. */
  readonly heldBy?: BlockingGate;
  /**
   * Computed from the wave's tally (a member's run): how many members it has, how many are Ready
   * at the digest, and whether any took it; `members` then lists only the member itself.
   */
  readonly counts?: { readonly size: number; readonly ready: number; readonly started: boolean };
}

/** Why a rollout is halted, and what to do. */
export interface RolloutHalt {
  readonly wave: number;
  readonly delivery?: string;
  readonly why: string;
  /** Whether a halt action records it (it then outlasts the failure, until a resume). */
  readonly recorded: boolean;
  readonly at?: string;
  readonly by?: string;
  /** Whether AWS verified `by` (false: a claim, made locally). */
  readonly verified?: boolean;
  /** The recorded halt's place in the rollout's actions. */
  readonly sequence?: number;
  /** Recorded by sluice on a failure (a newer push supersedes it); absent: a person's halt, which holds a newer push too until the resume. */
  readonly automatic?: boolean;
  readonly todo: string;
}

export type RolloutPhase = 'Idle' | 'Progressing' | 'Halted' | 'Complete';

export interface RolloutState {
  readonly rollout: string;
  readonly phase: RolloutPhase;
  readonly generation?: RolloutGeneration;
  readonly waves: readonly WaveView[];
  /** The wave (1-based) under way: the first that is not complete. */
  readonly activeWave?: number;
  /** The members that may apply the generation's digest now; the others keep their revision. */
  readonly mayTake: ReadonlySet<string>;
  readonly halt?: RolloutHalt;
  /** When the state changes by itself next (a soak ends). */
  readonly nextAt?: string;
  /** The last action's place in the sequence (0: none): a new action is recorded only after it. */
  readonly actionsSeen: number;
}

/** Reasons a run records while something holds it: not failures of the revision. */
export const HOLDS: ReadonlySet<StatusReason> = new Set<StatusReason>([
  'GateClosed',
  'DependencyNotReady',
  'ClusterBusy',
  'RolloutWaiting',
  'RolloutHalted',
  'PruneLimitExceeded',
  'Progressing',
]);

const digestOf = (revision: string | undefined): string | undefined =>
  revision === undefined || !revision.includes('sha256:')
    ? undefined
    : revision.slice(revision.lastIndexOf('sha256:'));

/** The waves a generation goes through: a rollback is one wave of every member, without soak or gate. */
export function wavesOf(rollout: Rollout, generation: RolloutGeneration | undefined): readonly RolloutWave[] {
  if (generation?.kind !== 'rollback') return rollout.waves;
  const everyone = rollout.waves.flatMap((wave) => wave.deliveries);
  return [{ patterns: ['*'], deliveries: everyone }];
}

/** Actions in the order recorded: by sequence (by time only for records that have none). */
const inOrder = (a: RolloutAction, b: RolloutAction) =>
  (a.sequence ?? 0) - (b.sequence ?? 0) || a.at.localeCompare(b.at);

/** The latest resume of the generation, and the latest halt recorded after it. */
export function actionsOf(actions: readonly RolloutAction[], generation: number) {
  const own = actions.filter((action) => action.generation === generation).sort(inOrder);
  const last = (kind: RolloutAction['action']) => own.findLastIndex((action) => action.action === kind);
  const resumeAt = last('resume');
  const haltAt = last('halt');
  return {
    resume: resumeAt >= 0 ? own[resumeAt] : undefined,
    halt: haltAt > resumeAt ? own[haltAt] : undefined,
  };
}

export const lastSequence = (actions: readonly RolloutAction[]) =>
  actions.reduce((most, action) => Math.max(most, action.sequence ?? 0), 0);

export interface Classified {
  readonly phase: 'Done' | 'Progressing' | 'Failed' | 'Fresh';
  readonly why?: string;
  readonly readySince?: string;
  /** Its own gate held it, closed by an alarm in ALARM (read after the last resume). */
  readonly alarm?: string;
  /** Whether it applied the digest (Ready or not): the revision has gone out. */
  readonly applied?: boolean;
}

/** The alarms in ALARM of a gate's holds, as text; none when no alarm of it is in ALARM. */
export const firingText = (gate: BlockingGate): string | undefined => {
  const firing = (gate.closedByAlarms ?? []).filter((hold) => hold.state === 'ALARM');
  return firing.length > 0
    ? firing.map((hold) => `alarm '${hold.alarm}' (${hold.why})`).join(', ')
    : undefined;
};

/**
 * One member against the digest; a failure, or an alarm hold, recorded before the last resume
 * does not count (a reading taken before the resume cannot halt the rollout after it).
 */
export function classify(
  status: DeliveryStatus | undefined,
  digest: string,
  resumedAt: string | undefined,
): Classified {
  if (!status) return { phase: 'Fresh' };
  const afterResume = resumedAt === undefined || status.lastReconcileAt > resumedAt;
  const alarm =
    status.reason === 'GateClosed' && afterResume
      ? (status.blockedBy ?? []).flatMap((gate) => {
          const text = firingText(gate);
          return text ? [`gate '${gate.name}' closed by ${text}`] : [];
        })[0]
      : undefined;
  const applied = digestOf(status.lastAppliedRevision) === digest;
  if (status.ready && applied)
    return { phase: 'Done', readySince: status.readySince ?? status.lastSuccessAt ?? status.lastReconcileAt };
  const attempted = digestOf(status.lastAttemptedRevision) === digest;
  if (attempted && !status.ready && !HOLDS.has(status.reason) && afterResume)
    return { phase: 'Failed', why: `${status.reason}: ${status.message}`, applied };
  if (attempted)
    return {
      phase: 'Progressing',
      why: `${status.reason}: ${status.message}`,
      applied,
      ...(alarm && { alarm }),
    };
  return { phase: 'Fresh', ...(alarm && { alarm }) };
}

export const todoFor = (rollout: string, delivery: string | undefined, byPerson = false) =>
  `${delivery ? `look at delivery '${delivery}' (sluice status ${delivery}); then` : 'once the cause is gone,'} 'sluice rollout resume ${rollout} --reason …' to go on with this revision${
    byPerson
      ? `, or 'sluice rollout rollback ${rollout} --reason …' to return every member to the previous one (a newer revision pushed meanwhile waits for the resume)`
      : `, 'sluice rollout rollback ${rollout} --reason …' to return every member to the previous one, or push a newer revision`
  }`;

/** The halt a recorded halt action stands for: it outlasts the failure, until a resume. */
export const haltOf = (rollout: string, recorded: RolloutAction): RolloutHalt => ({
  wave: recorded.wave ?? 0,
  ...(recorded.delivery && { delivery: recorded.delivery }),
  why: recorded.reason,
  recorded: true,
  at: recorded.at,
  by: recorded.by,
  verified: recorded.verified,
  ...(recorded.sequence !== undefined && { sequence: recorded.sequence }),
  ...(recorded.automatic && { automatic: true }),
  todo: todoFor(rollout, recorded.delivery, !recorded.automatic),
});

/** The rollout's state at `now`: which wave is under way, who may take the digest, and whether (and why) it is halted. */
export function rolloutState(inputs: RolloutInputs): RolloutState {
  const { rollout, generation, statuses, now } = inputs;
  if (!generation)
    return {
      rollout: rollout.name,
      phase: 'Idle',
      waves: rollout.waves.map((wave, index) => ({
        number: index + 1,
        phase: 'Pending',
        members: wave.deliveries.map((name) => ({ name, phase: 'Waiting', why: 'no revision resolved yet' })),
      })),
      mayTake: new Set(),
      actionsSeen: lastSequence(inputs.actions),
    };
  const { digest } = generation;
  const { resume, halt: recordedHalt } = actionsOf(inputs.actions, generation.generation);
  const waves = wavesOf(rollout, generation);
  const rollback = generation.kind === 'rollback';
  let halt: RolloutHalt | undefined = recordedHalt && haltOf(rollout.name, recordedHalt);
  const found = (wave: number, why: string, delivery?: string) => {
    halt ??= {
      wave,
      ...(delivery && { delivery }),
      why,
      recorded: false,
      todo: todoFor(rollout.name, delivery),
    };
  };

  const views: WaveView[] = [];
  const mayTake = new Set<string>();
  let nextAt: string | undefined;
  let activeWave: number | undefined;
  let earlierComplete = true;
  const classifiedWaves = waves.map((wave) =>
    wave.deliveries.map((name) => ({ name, ...classify(statuses.get(name), digest, resume?.at) })),
  );
  // An alarm halts the rollout only as evidence against the revision: in ALARM once some member
  // has applied it. Before that (a first deploy, an alarm with no data yet, one firing for reasons
  // of its own) a closed alarm gate holds the wave, which goes on when the alarm clears: like
  // Argo Rollouts, an inconclusive analysis pauses, a failed one aborts.
  const wentOut = classifiedWaves.some((members) =>
    members.some((member) => member.applied || member.phase === 'Done'),
  );
  waves.forEach((wave, index) => {
    const number = index + 1;
    const classified = classifiedWaves[index]!;
    const started = classified.some((member) => member.phase !== 'Fresh');
    const gate = rollback ? undefined : inputs.waveGates.get(index);
    // Only a wave that may run can halt the rollout: later ones have not taken the digest.
    if (earlierComplete || started) {
      for (const member of classified) {
        if (member.phase === 'Failed')
          found(
            number,
            `delivery '${member.name}' failed at ${generation.revision}: ${member.why}`,
            member.name,
          );
        else if (member.alarm && wentOut)
          found(number, `delivery '${member.name}' is held: ${member.alarm}`, member.name);
      }
      const firing = gate && wentOut ? firingText(gate) : undefined;
      if (firing) found(number, `wave ${number}'s gate '${gate!.name}' is closed by ${firing}`);
    }
    const done = classified.filter((member) => member.phase === 'Done');
    const soakMs = rollback ? undefined : wave.soakMs;
    const soakEnd =
      done.length === classified.length && soakMs !== undefined
        ? Math.max(...done.map((member) => Date.parse(member.readySince!))) + soakMs
        : undefined;
    const soaked = soakEnd === undefined || soakEnd <= now.getTime();
    const complete = earlierComplete && done.length === classified.length && soaked;

    // Members that took the digest keep it (re-applied, drift corrected), halted or not.
    for (const member of classified) if (member.phase === 'Done') mayTake.add(member.name);
    const admitted = new Set<string>();
    const gateHolds = gate !== undefined;
    if (earlierComplete && !complete && !halt && !gateHolds) {
      const open = classified.filter((member) => member.phase !== 'Done');
      // A rollback goes to every member at once: maxParallel paces a new revision, not a return.
      const limit = rollback ? open.length : (rollout.maxParallel ?? open.length);
      for (const member of open.slice(0, limit)) admitted.add(member.name);
    }
    if (earlierComplete && !complete && !halt && gateHolds)
      // A gate that closes mid-wave admits no one new; who took the digest goes on with it.
      for (const member of classified) if (member.phase === 'Progressing') admitted.add(member.name);
    for (const name of admitted) mayTake.add(name);

    // Said as what it waits for: `wave 2 of 3 waits for <this>`.
    const waiting = !earlierComplete
      ? `wave ${number - 1} to finish`
      : gateHolds
        ? `gate '${gate.name}' to open`
        : halt
          ? 'the rollout to resume'
          : `its turn in wave ${number}${rollout.maxParallel !== undefined ? ` (maxParallel ${rollout.maxParallel})` : ''}`;
    const members: MemberView[] = classified.map((member) => {
      if (member.phase === 'Done')
        return soakEnd !== undefined && !soaked
          ? { name: member.name, phase: 'Soaking', why: `Ready since ${member.readySince}` }
          : { name: member.name, phase: 'Done' };
      if (member.phase === 'Failed') return { name: member.name, phase: 'Failed', why: member.why! };
      if (member.phase === 'Progressing' && admitted.has(member.name))
        return { name: member.name, phase: 'Progressing', why: member.why! };
      if (admitted.has(member.name)) return { name: member.name, phase: 'Admitted' };
      return { name: member.name, phase: 'Waiting', why: waiting };
    });
    const soakEndsAt = soakEnd !== undefined && !soaked ? new Date(soakEnd).toISOString() : undefined;
    if (earlierComplete && !complete && activeWave === undefined) {
      activeWave = number;
      if (soakEndsAt) nextAt = soakEndsAt;
    }
    views.push({
      number,
      phase: complete
        ? 'Complete'
        : !earlierComplete
          ? 'Pending'
          : soakEndsAt
            ? 'Soaking'
            : gateHolds && !started
              ? 'Gated'
              : 'Progressing',
      members,
      ...(soakEndsAt && { soakEndsAt }),
      ...(gate && { heldBy: gate }),
    });
    earlierComplete = complete;
  });
  // Recorded as completed: it stays complete; a member failing since fails alone (its row says so).
  if (generation.completedAt)
    return {
      ...completedState(rollout, generation),
      waves: views,
      actionsSeen: lastSequence(inputs.actions),
    };
  return {
    rollout: rollout.name,
    phase: halt ? 'Halted' : earlierComplete ? 'Complete' : 'Progressing',
    generation,
    waves: views,
    ...(activeWave !== undefined && { activeWave }),
    mayTake,
    ...(halt && { halt }),
    ...(nextAt && !halt && { nextAt }),
    actionsSeen: lastSequence(inputs.actions),
  };
}

/**
 * The state of a generation recorded as completed: every wave Complete, every member may take (and
 * keep) the digest. Computed without the members' statuses: a run of a member of a fleet of
 * thousands reads one item, not thousands.
 */
export function completedState(rollout: Rollout, generation: RolloutGeneration): RolloutState {
  const waves = wavesOf(rollout, generation);
  return {
    rollout: rollout.name,
    phase: 'Complete',
    generation,
    waves: waves.map((wave, index) => ({
      number: index + 1,
      phase: 'Complete',
      members: wave.deliveries.map((name) => ({ name, phase: 'Done' })),
    })),
    mayTake: new Set(waves.flatMap((wave) => wave.deliveries)),
    actionsSeen: 0,
  };
}

/** Whether a member may take the generation's digest now, and if not, why (for its held status). */
export function memberTurn(
  state: RolloutState,
  delivery: string,
): { readonly take: true } | { readonly take: false; readonly halted: boolean; readonly why: string } {
  if (state.mayTake.has(delivery)) return { take: true };
  const revision = state.generation?.revision ?? 'its revision';
  const at = `rollout '${state.rollout}' of ${revision}`;
  if (state.halt)
    return { take: false, halted: true, why: `${at} is halted: ${state.halt.why}; ${state.halt.todo}` };
  const wave = state.waves.find((view) => view.members.some((member) => member.name === delivery));
  const member = wave?.members.find((view) => view.name === delivery);
  const active = state.activeWave !== undefined ? state.waves[state.activeWave - 1] : undefined;
  const soak = active?.soakEndsAt ? `, soaking until ${active.soakEndsAt}` : '';
  return {
    take: false,
    halted: false,
    why: `${at}: wave ${wave?.number ?? '?'} of ${state.waves.length} waits for ${member?.why ?? 'its turn'}${active && active !== wave ? ` (wave ${active.number} ${active.phase.toLowerCase()}${soak})` : ''}`,
  };
}

/**
 * Whether a waiting member is retried when the active wave's soak ends: only the first
 * `maxParallel` waiting members of the next wave (all of it without a limit). The others follow
 * them (each run reconciles the members whose turn has come), so a fleet of thousands does not
 * schedule thousands of retries for the same instant.
 */
export function wakesAtSoakEnd(
  state: RolloutState,
  delivery: string,
  maxParallel: number | undefined,
): boolean {
  if (!state.nextAt || state.halt || state.activeWave === undefined) return false;
  const next = state.waves[state.activeWave];
  const waiting = next?.members.filter((member) => member.phase === 'Waiting') ?? [];
  return waiting.slice(0, maxParallel ?? waiting.length).some((member) => member.name === delivery);
}

/** Whether a member of the wave took the digest (or, for a tally's view, any did). */
export const waveStarted = (wave: WaveView): boolean =>
  wave.counts?.started ?? wave.members.some((member) => member.phase !== 'Waiting');

/** A one-line summary: `wave 2 of 3 progressing (4 of 10 Ready)`, `halted in wave 1: …`, `complete`. */
export function rolloutSummary(state: RolloutState): string {
  if (state.phase === 'Idle') return 'no revision rolled out yet';
  const revision = state.generation!.revision;
  if (state.halt) return `${revision}: halted in wave ${state.halt.wave}: ${state.halt.why}`;
  if (state.phase === 'Complete') return `${revision}: complete, every wave Ready`;
  const wave = state.waves[state.activeWave! - 1]!;
  const ready =
    wave.counts?.ready ??
    wave.members.filter((member) => member.phase === 'Done' || member.phase === 'Soaking').length;
  const soak = wave.soakEndsAt ? `, soaking until ${wave.soakEndsAt}` : '';
  const gate = wave.heldBy ? `, held by gate '${wave.heldBy.name}'` : '';
  return `${revision}: wave ${wave.number} of ${state.waves.length} ${wave.phase.toLowerCase()} (${ready} of ${wave.counts?.size ?? wave.members.length} Ready${soak}${gate})`;
}
