// A wave's tally: what a member's run needs to know of the other members of its wave (how many
// are Ready at the digest and since when, which failed, how many hold a maxParallel place),
// kept as the sum of the members' contributions. Each member's run-end changes the tally by the
// difference its own status made (`tallyChange`), in the same transaction as the status, so a
// repeated run changes nothing and a lost one changes neither; `tallyOf` derives it again from the
// statuses (the repair). Plain values only: the table's side is store/rollout-tallies.ts.
import type { RolloutMark, TallyChange, TallyNote, WaveTally } from '../model/rollout.ts';
import type { DeliveryStatus } from '../model/status.ts';
import { classify } from './state.ts';

export type { TallyChange, TallyNote, WaveTally };

/** What one member's status adds to its wave's tally. */
export interface Contribution {
  /** Ready at the digest. */
  readonly done: boolean;
  /** Took the digest or tried to (not Fresh). */
  readonly started: boolean;
  /** Applied the digest (Ready or not): the revision went out. */
  readonly applied: boolean;
  /** Holds a maxParallel place and is not Ready yet. */
  readonly open: boolean;
  readonly readySince?: string;
  readonly failure?: TallyNote;
  readonly alarm?: TallyNote;
}

export const NO_CONTRIBUTION: Contribution = { done: false, started: false, applied: false, open: false };

export const EMPTY_TALLY: WaveTally = { done: 0, started: 0, applied: 0, open: 0, failures: {}, alarms: {} };

/**
 * What `status` adds to the tally of the generation its mark names; nothing when it has no mark,
 * or one of another generation than `mark`'s (the status counts toward one generation at a time).
 * Failures and alarm holds are kept with their time, whatever the resumes: the tally's reader
 * discounts those before the last resume.
 */
export function contributionOf(
  status: DeliveryStatus | undefined,
  generation: Pick<RolloutMark, 'rollout' | 'generation' | 'startedAt' | 'digest'>,
): Contribution {
  const mark = status?.rolloutMark;
  if (!status || !mark || !sameGeneration(mark, generation)) return NO_CONTRIBUTION;
  const member = classify(status, generation.digest, undefined);
  const done = member.phase === 'Done';
  const note = (why: string): TallyNote => ({ at: status.lastReconcileAt, why });
  return {
    done,
    started: member.phase !== 'Fresh',
    applied: done || member.applied === true,
    open: mark.claimed === true && !done,
    ...(done && { readySince: member.readySince! }),
    ...(member.phase === 'Failed' && { failure: note(member.why!) }),
    ...(member.alarm !== undefined && { alarm: note(member.alarm) }),
  };
}

export const sameGeneration = (
  a: Pick<RolloutMark, 'rollout' | 'generation' | 'startedAt'>,
  b: Pick<RolloutMark, 'rollout' | 'generation' | 'startedAt'>,
): boolean => a.rollout === b.rollout && a.generation === b.generation && a.startedAt === b.startedAt;

/** The tally of these contributions (by member name): the repair's derivation. */
export function tallyOf(contributions: ReadonlyMap<string, Contribution>): WaveTally {
  let tally: WaveTally = EMPTY_TALLY;
  for (const [name, contribution] of contributions)
    tally = applyChange(tally, name, tallyChange(NO_CONTRIBUTION, contribution));
  return tally;
}

const count = (flag: boolean) => (flag ? 1 : 0);
const sameNote = (a: TallyNote | undefined, b: TallyNote | undefined) => a?.at === b?.at && a?.why === b?.why;
const noteChange = (before: TallyNote | undefined, after: TallyNote | undefined) =>
  sameNote(before, after) ? undefined : (after ?? null);

/** The change from one contribution of a member to the next (none at all when they are the same). */
export function tallyChange(before: Contribution, after: Contribution): TallyChange | undefined {
  const failure = noteChange(before.failure, after.failure);
  const alarm = noteChange(before.alarm, after.alarm);
  const change: TallyChange = {
    done: count(after.done) - count(before.done),
    started: count(after.started) - count(before.started),
    applied: count(after.applied) - count(before.applied),
    open: count(after.open) - count(before.open),
    ...(after.done && after.readySince !== before.readySince && { readySince: after.readySince! }),
    ...(failure !== undefined && { failure }),
    ...(alarm !== undefined && { alarm }),
  };
  const nothing =
    change.done === 0 &&
    change.started === 0 &&
    change.applied === 0 &&
    change.open === 0 &&
    change.readySince === undefined &&
    failure === undefined &&
    alarm === undefined;
  return nothing ? undefined : change;
}

const later = (a: string | undefined, b: string | undefined) =>
  a === undefined ? b : b === undefined ? a : Date.parse(b) > Date.parse(a) ? b : a;

function withNote(
  notes: Readonly<Record<string, TallyNote>>,
  name: string,
  note: TallyNote | null | undefined,
): Readonly<Record<string, TallyNote>> {
  if (note === undefined) return notes;
  const { [name]: _gone, ...rest } = notes;
  return note === null ? rest : { ...rest, [name]: note };
}

/** The tally after `change` by `name` (what the table's update does, as plain values). */
export function applyChange(tally: WaveTally, name: string, change: TallyChange | undefined): WaveTally {
  if (!change) return tally;
  const lastReady = later(tally.lastReady, change.readySince);
  return {
    done: tally.done + change.done,
    started: tally.started + change.started,
    applied: tally.applied + change.applied,
    open: tally.open + change.open,
    ...(lastReady !== undefined && { lastReady }),
    failures: withNote(tally.failures, name, change.failure),
    alarms: withNote(tally.alarms, name, change.alarm),
  };
}

/**
 * Whether a tally can be the sum of `size` members' contributions; one that cannot (a count below
 * 0 or above the wave, more Ready than started) is derived again from the statuses.
 */
export function tallyConsistent(tally: WaveTally, size: number): boolean {
  const within = (n: number) => Number.isInteger(n) && n >= 0 && n <= size;
  return (
    within(tally.done) &&
    within(tally.started) &&
    within(tally.applied) &&
    within(tally.open) &&
    tally.done <= tally.started &&
    tally.done <= tally.applied &&
    (tally.done === 0 || tally.lastReady !== undefined)
  );
}
