// A rollout's state as one member's run computes it: from its waves' tallies (rollout/tally.ts)
// and its own status, not from every member's status, so a run reads O(waves) items whatever the
// fleet's size. The same rules as rolloutState (state.ts): waves in order, soaks, wave gates,
// halts found and recorded, resumes. maxParallel is a count of places taken (a member takes one
// before it takes the digest, and gives it back once Ready at it), offered in the wave's order:
// to the members before the wave's Ready count plus maxParallel. The rollout is its outline (a count
// per wave) and the member knows its own place: nothing here grows with the fleet.
import type { MemberPlace, RolloutOutline, WaveOutline } from '../config/rollout-outline.ts';
import type { RolloutAction, RolloutGeneration } from '../model/rollout.ts';
import type { BlockingGate, DeliveryStatus } from '../model/status.ts';
import {
  actionsOf,
  classify,
  firingText,
  haltOf,
  lastSequence,
  todoFor,
  type MemberView,
  type RolloutHalt,
  type RolloutState,
  type WavePhase,
  type WaveView,
} from './state.ts';
import type { WaveTally } from './tally.ts';

export interface TallyInputs {
  readonly rollout: RolloutOutline;
  readonly generation: RolloutGeneration;
  /** Per wave (0-based, as wavesOf lists them): its tally. */
  readonly tallies: readonly WaveTally[];
  readonly waveGates: ReadonlyMap<number, BlockingGate | undefined>;
  readonly actions: readonly RolloutAction[];
  readonly now: Date;
  /** The member whose run asks, with its status as its run found it (under its lease). */
  readonly member: {
    readonly name: string;
    readonly status: DeliveryStatus | undefined;
    /** Whether it holds one of its wave's maxParallel places in this generation. */
    readonly claimed: boolean;
    /** Its place in the rollout's waves (undefined: not a member of them). */
    readonly place: MemberPlace | undefined;
  };
}

/** What the member's run may do: take the digest, take a place first (then take it), or wait. */
export type TallyTurn = 'take' | 'claim' | 'wait';

export interface TallyState {
  readonly state: RolloutState;
  readonly turn: TallyTurn;
  /** The member's wave (0-based). */
  readonly wave: number;
}

/** The waves a generation goes through, as counts: a rollback is one wave of every member, without soak or gate. */
export function outlineWavesOf(
  rollout: RolloutOutline,
  generation: RolloutGeneration,
): readonly WaveOutline[] {
  if (generation.kind !== 'rollback') return rollout.waves;
  return [{ patterns: ['*'], size: rollout.waves.reduce((sum, wave) => sum + wave.size, 0) }];
}

/** A member's place in the generation's waves: in a rollback, its position among every member. */
export function placeInGeneration(
  rollout: RolloutOutline,
  generation: RolloutGeneration,
  place: MemberPlace | undefined,
): MemberPlace | undefined {
  if (!place || generation.kind !== 'rollback') return place;
  const before = rollout.waves.slice(0, place.wave).reduce((sum, wave) => sum + wave.size, 0);
  return { wave: 0, position: before + place.position };
}

/** A generation recorded as completed: every wave Complete; a member takes (and keeps) the digest. */
function completedOutlineState(
  rollout: RolloutOutline,
  generation: RolloutGeneration,
  member: string | undefined,
): RolloutState {
  return {
    rollout: rollout.name,
    phase: 'Complete',
    generation,
    waves: outlineWavesOf(rollout, generation).map((wave, index) => ({
      number: index + 1,
      phase: 'Complete',
      members: [],
      counts: { size: wave.size, ready: wave.size, started: true },
    })),
    mayTake: new Set(member ? [member] : []),
    actionsSeen: 0,
  };
}

/** The state at `now` as far as `member` needs it, and its turn. */
export function tallyState(inputs: TallyInputs): TallyState {
  const { rollout, generation, tallies, now, member } = inputs;
  const waves = outlineWavesOf(rollout, generation);
  const place = placeInGeneration(rollout, generation, member.place);
  const ownWave =
    place && place.wave < waves.length && place.position < waves[place.wave]!.size ? place.wave : -1;
  if (generation.completedAt)
    return {
      state: completedOutlineState(rollout, generation, ownWave >= 0 ? member.name : undefined),
      turn: ownWave >= 0 ? 'take' : 'wait',
      wave: ownWave,
    };
  const rollback = generation.kind === 'rollback';
  const { resume, halt: recordedHalt } = actionsOf(inputs.actions, generation.generation);
  const afterResume = (at: string) => resume === undefined || at > resume.at;
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
  const tallyAt = (index: number): WaveTally =>
    tallies[index] ?? { done: 0, started: 0, applied: 0, open: 0, failures: {}, alarms: {} };
  const wentOut = waves.some((_, index) => tallyAt(index).applied > 0);
  const own = classify(member.status, generation.digest, resume?.at);

  const views: WaveView[] = [];
  let earlierComplete = true;
  let activeWave: number | undefined;
  let nextAt: string | undefined;
  let turn: TallyTurn = own.phase === 'Done' && ownWave >= 0 ? 'take' : 'wait';
  waves.forEach((wave, index) => {
    const number = index + 1;
    const tally = tallyAt(index);
    const size = wave.size;
    const gate = rollback ? undefined : inputs.waveGates.get(index);
    if (earlierComplete || tally.started > 0) {
      // In the order the runs recorded them; those before the last resume do not count.
      const failures = Object.entries(tally.failures)
        .filter(([, note]) => afterResume(note.at))
        .sort(([a, x], [b, y]) => x.at.localeCompare(y.at) || a.localeCompare(b));
      for (const [name, note] of failures)
        found(number, `delivery '${name}' failed at ${generation.revision}: ${note.why}`, name);
      if (wentOut) {
        const alarms = Object.entries(tally.alarms)
          .filter(([, note]) => afterResume(note.at))
          .sort(([a, x], [b, y]) => x.at.localeCompare(y.at) || a.localeCompare(b));
        for (const [name, note] of alarms) found(number, `delivery '${name}' is held: ${note.why}`, name);
      }
      const firing = gate && wentOut ? firingText(gate) : undefined;
      if (firing) found(number, `wave ${number}'s gate '${gate!.name}' is closed by ${firing}`);
    }
    const allDone = tally.done >= size;
    const soakMs = rollback ? undefined : wave.soakMs;
    const soakEnd =
      allDone && soakMs !== undefined && tally.lastReady !== undefined
        ? Date.parse(tally.lastReady) + soakMs
        : undefined;
    const soaked = soakEnd === undefined || soakEnd <= now.getTime();
    const complete = earlierComplete && allDone && soaked;
    const open = earlierComplete && !complete && !halt;
    const gateHolds = gate !== undefined;

    let ownView: MemberView | undefined;
    if (index === ownWave) {
      if (own.phase !== 'Done' && open) {
        if (gateHolds) {
          // A gate that closes mid-wave admits no one new; who took the digest goes on with it.
          if (own.phase === 'Progressing') turn = 'take';
        } else if (rollback || rollout.maxParallel === undefined || member.claimed) turn = 'take';
        else if (
          tally.open < rollout.maxParallel &&
          // In the wave's order: the first maxParallel members past as many as are Ready.
          place!.position < tally.done + rollout.maxParallel
        )
          turn = 'claim';
      }
      const waiting = !earlierComplete
        ? `wave ${number - 1} to finish`
        : gateHolds
          ? `gate '${gate.name}' to open`
          : halt
            ? 'the rollout to resume'
            : `its turn in wave ${number}${rollout.maxParallel !== undefined ? ` (maxParallel ${rollout.maxParallel}, ${tally.open} taken)` : ''}`;
      ownView =
        own.phase === 'Done'
          ? soakEnd !== undefined && !soaked
            ? { name: member.name, phase: 'Soaking', why: `Ready since ${own.readySince}` }
            : { name: member.name, phase: 'Done' }
          : own.phase === 'Failed'
            ? { name: member.name, phase: 'Failed', why: own.why! }
            : turn !== 'wait'
              ? own.phase === 'Progressing'
                ? { name: member.name, phase: 'Progressing', why: own.why! }
                : { name: member.name, phase: 'Admitted' }
              : { name: member.name, phase: 'Waiting', why: waiting };
    }
    const soakEndsAt = soakEnd !== undefined && !soaked ? new Date(soakEnd).toISOString() : undefined;
    if (earlierComplete && !complete && activeWave === undefined) {
      activeWave = number;
      if (soakEndsAt) nextAt = soakEndsAt;
    }
    const started = tally.started > 0;
    const phase: WavePhase = complete
      ? 'Complete'
      : !earlierComplete
        ? 'Pending'
        : soakEndsAt
          ? 'Soaking'
          : gateHolds && !started
            ? 'Gated'
            : 'Progressing';
    views.push({
      number,
      phase,
      members: ownView ? [ownView] : [],
      counts: { size, ready: Math.min(tally.done, size), started: started || (open && !gateHolds) },
      ...(soakEndsAt && { soakEndsAt }),
      ...(gate && { heldBy: gate }),
    });
    earlierComplete = complete;
  });
  const state: RolloutState = {
    rollout: rollout.name,
    phase: halt ? 'Halted' : earlierComplete ? 'Complete' : 'Progressing',
    generation,
    waves: views,
    ...(activeWave !== undefined && { activeWave }),
    mayTake: new Set(turn === 'take' ? [member.name] : []),
    ...(halt && { halt }),
    ...(nextAt && !halt && { nextAt }),
    actionsSeen: lastSequence(inputs.actions),
  };
  return { state, turn, wave: ownWave };
}

/** The state once the member took its place: it may take the digest. */
export const afterClaim = (tally: TallyState, member: string): TallyState => ({
  ...tally,
  turn: 'take',
  state: { ...tally.state, mayTake: new Set([member]) },
});

/**
 * Whether the member at `place` (in the generation's waves) is retried when the active wave's soak
 * ends: one of the first `maxParallel` of the next wave (all of it without a limit), in the wave's
 * order. The others follow them.
 */
export function wakesAtSoakEndInOrder(
  rollout: Pick<RolloutOutline, 'maxParallel'>,
  state: RolloutState,
  place: MemberPlace | undefined,
): boolean {
  if (!state.nextAt || state.halt || state.activeWave === undefined || !state.generation || !place)
    return false;
  return place.wave === state.activeWave && place.position < (rollout.maxParallel ?? Infinity);
}
