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
