// The vocabulary of a rollout's records: which revision it is rolling out (its generation), and
// the halts and resumes asked for, as the table keeps them and `sluice rollout status` shows them.

/** A digest and the revision it was resolved as (`<tag>@sha256:<hex>`). */
export interface RolloutRevision {
  readonly digest: string;
  readonly revision: string;
}

/** What a rollout is rolling out now: one generation, replaced (conditionally) by the next. */
export interface RolloutGeneration extends RolloutRevision {
  /** 1 for the first revision rolled out, one more for each after it. */
  readonly generation: number;
  readonly startedAt: string;
  /** `rollback`: back to `previous` of the generation rolled back, every member at once (no waves). */
  readonly kind: 'rollout' | 'rollback';
  /** The revision the fleet had before: the last generation that completed, if any (what a rollback returns to). */
  readonly previous?: RolloutRevision;
  /** Digests rolled back: the source resolving to one of them starts no generation. */
  readonly rejected?: readonly string[];
  /** Who started it: `source` (a new revision), or the verified identity of a rollback. */
  readonly startedBy: string;
  /** For a rollback: whether AWS verified `startedBy` (false: a claim, made locally). */
  readonly verified?: boolean;
  readonly reason?: string;
  /**
   * When a run first found every wave Ready (and soaked) at it. From then on the members' runs take
   * its digest without reading the fleet's statuses; a member failing later fails alone, halting nothing.
   */
  readonly completedAt?: string;
}

/**
 * A halt, resume or rollback of one generation: asked for by a person (`sluice rollout …`), or
 * (halt) recorded by the run that found the failure. A rollback's record names the generation it
 * rolled back; the rollback itself is the next generation.
 */
export interface RolloutAction {
  readonly action: 'halt' | 'resume' | 'rollback';
  readonly generation: number;
  readonly at: string;
  /** The verified identity (an ARN), `sluice` for an automatic halt, or an unverified claim. */
  readonly by: string;
  readonly verified: boolean;
  readonly reason: string;
  /** The wave (1-based) and delivery an automatic halt was found in. */
  readonly wave?: number;
  readonly delivery?: string;
  readonly automatic?: boolean;
  /** How a person's action arrived: `url` or `invoke` (signed, through the rollouts entry), `cli` (locally, a claim). */
  readonly source?: 'url' | 'invoke' | 'cli';
  /** Its place among the rollout's actions (1, 2, …), given by the table when it is recorded. */
  readonly sequence?: number;
}

/**
 * What a member's status counts toward: the generation its last run read (the wave tallies of that
 * generation hold its status as `contributionOf` reads it), its wave, and whether it holds one of
 * the wave's `maxParallel` places. Written with the status, in the same transaction as the tally's
 * change, so the tallies are always the sum of the marks (rollout/tally.ts).
 */
export interface RolloutMark {
  readonly rollout: string;
  readonly generation: number;
  /** With `generation`, names one generation (a rollout removed and added again numbers from 1 again). */
  readonly startedAt: string;
  readonly digest: string;
  /** The member's wave, 0-based. */
  readonly wave: number;
  /** It took one of its wave's maxParallel places (kept until it is Ready at the digest). */
  readonly claimed?: boolean;
}

/** A failure or an alarm hold in a wave's tally, with when its run recorded it (a resume after it discounts it). */
export interface TallyNote {
  readonly at: string;
  readonly why: string;
}

/** The sum of a wave's members' contributions to a generation (rollout/tally.ts). */
export interface WaveTally {
  /** Members Ready at the digest. */
  readonly done: number;
  /** Members that took the digest or tried to. */
  readonly started: number;
  /** Members that applied the digest (Ready or not). */
  readonly applied: number;
  /** Members holding a maxParallel place, not Ready yet. */
  readonly open: number;
  /** Not earlier than the readySince of any member Ready at the digest: the wave's soak counts from it. */
  readonly lastReady?: string;
  readonly failures: Readonly<Record<string, TallyNote>>;
  readonly alarms: Readonly<Record<string, TallyNote>>;
}

/** How one member's run changes its wave's tally: counts added, notes set or removed, a readySince. */
export interface TallyChange {
  readonly done: number;
  readonly started: number;
  readonly applied: number;
  readonly open: number;
  /** The member is Ready since then: the tally's lastReady becomes at least this. */
  readonly readySince?: string;
  /** undefined: unchanged; null: removed. */
  readonly failure?: TallyNote | null;
  readonly alarm?: TallyNote | null;
}
