// A rollout's state as one member's run computes it: from its waves' tallies (rollout/tally.ts)
// and its own status, not from every member's status, so a run reads O(waves) items whatever the
// fleet's size. The same rules as rolloutState (state.ts): waves in order, soaks, wave gates,
// halts found and recorded, resumes. maxParallel is a count of places taken (a member takes one
// before it takes the digest, and gives it back once Ready at it), offered in the wave's order:
// to the members before the wave's Ready count plus maxParallel.
import type { Rollout } from '../config/index.ts';
import type { RolloutAction, RolloutGeneration } from '../model/rollout.ts';
import type { BlockingGate, DeliveryStatus } from '../model/status.ts';
import {
  actionsOf,
  classify,
  completedState,
  firingText,
  lastSequence,
  todoFor,
  wavesOf,
  type MemberView,
  type RolloutHalt,
  type RolloutState,
  type WavePhase,
  type WaveView,
} from './state.ts';
import type { WaveTally } from './tally.ts';

export interface TallyInputs {
  readonly rollout: Rollout;
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

/** The state at `now` as far as `member` needs it, and its turn. */
export function tallyState(inputs: TallyInputs): TallyState {
  const { rollout, generation, tallies, now, member } = inputs;
  const waves = wavesOf(rollout, generation);
  const ownWave = waves.findIndex((wave) => wave.deliveries.includes(member.name));
  if (generation.completedAt)
    return {
      state: completedState(rollout, generation),
      turn: ownWave >= 0 ? 'take' : 'wait',
      wave: ownWave,
    };
  const rollback = generation.kind === 'rollback';
  const { resume, halt: recordedHalt } = actionsOf(inputs.actions, generation.generation);
  const afterResume = (at: string) => resume === undefined || at > resume.at;
  let halt: RolloutHalt | undefined = recordedHalt && {
    wave: recordedHalt.wave ?? 0,
    ...(recordedHalt.delivery && { delivery: recordedHalt.delivery }),
    why: recordedHalt.reason,
    recorded: true,
    at: recordedHalt.at,
    by: recordedHalt.by,
    verified: recordedHalt.verified,
    ...(recordedHalt.sequence !== undefined && { sequence: recordedHalt.sequence }),
    ...(recordedHalt.automatic && { automatic: true }),
    todo: todoFor(rollout.name, recordedHalt.delivery, !recordedHalt.automatic),
  };
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
    const size = wave.deliveries.length;
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
          wave.deliveries.indexOf(member.name) < tally.done + rollout.maxParallel
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
 * Whether `delivery` is retried when the active wave's soak ends: one of the first `maxParallel`
 * of the next wave (all of it without a limit), in the wave's order. The others follow them.
 */
export function wakesAtSoakEndInOrder(rollout: Rollout, state: RolloutState, delivery: string): boolean {
  if (!state.nextAt || state.halt || state.activeWave === undefined || !state.generation) return false;
  const next = wavesOf(rollout, state.generation)[state.activeWave];
  return (next?.deliveries ?? []).slice(0, rollout.maxParallel ?? Infinity).includes(delivery);
}

/** The members to wake when a wave goes on: those of `wave` from `from` (in order) up to `upTo`. */
export function membersToWake(
  rollout: Rollout,
  generation: RolloutGeneration,
  wave: number,
  from: number,
  upTo: number,
): string[] {
  return (wavesOf(rollout, generation)[wave]?.deliveries ?? []).slice(from, upTo);
}
