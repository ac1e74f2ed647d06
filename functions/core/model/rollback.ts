// A delivery's rollback as the table keeps it: the request a verified person made (`sluice
// rollback`), and the revisions the delivery applied, which a rollback may return to.

/** Where a rollback request came from: the rollbacks entry's URL, a direct invocation of it, or a runbook. */
export type RollbackSource = 'url' | 'invoke' | 'runbook';

/**
 * A rollback asked for: the delivery goes back from `from` (running when it was asked) to `to`
 * (a revision it applied before, digest-pinned), and stays there while its source still resolves
 * to `from`'s digest. Kept on the delivery's status item (the lease's claim reads it), replaced
 * by the next request.
 */
export interface RollbackRequest {
  readonly id: string;
  /** The revision running when it was asked (`<tag>@sha256:…`). */
  readonly from: string;
  /** The revision to return to, as the delivery applied it (`<tag>@sha256:…`). */
  readonly to: string;
  /** A newer revision a gate held back when it was asked (status `pendingRevision`), if any. */
  readonly held?: string;
  /**
   * The digests the rollbacks in force when it was asked had rolled back from (a rollback of a
   * rollback): they stay rolled back too while the source resolves to one of them.
   */
  readonly rejected?: readonly string[];
  /** The principal AWS verified (a rollback is never taken on a claim). */
  readonly by: string;
  readonly reason: string;
  readonly at: string;
  readonly source: RollbackSource;
  /** The closed gates it was let through when asked (none of them holds rollback). */
  readonly through: readonly string[];
}

/** A revision the delivery applied: when it became the running one, and when another replaced it. */
export interface AppliedRevision {
  readonly digest: string;
  /** As the run applied it: `<tag>@sha256:…` (the tag as resolved then), or `sha256:…`. */
  readonly revision: string;
  /** The source URL it was pulled from (a rollback pulls the digest from the same repository only). */
  readonly url: string;
  /** When it last became the applied revision (absent: applied before this was recorded). */
  readonly appliedAt?: string;
  /** When another revision last replaced it (absent: it is the one running, or never was replaced). */
  readonly replacedAt?: string;
}

/** The detail of the `Delivery Rollback` event, published when a rollback is asked for. */
export interface DeliveryRollbackEvent {
  readonly delivery: string;
  readonly from: string;
  readonly to: string;
  /** The revisions as people are shown them: digest first, the tag as it was applied. */
  readonly fromShown: string;
  readonly toShown: string;
  readonly by: string;
  readonly reason: string;
  readonly at: string;
  readonly source: RollbackSource;
  /** The closed gates it goes through (none holds rollback), as `'a', 'b'`, or `none`. */
  readonly through: readonly string[];
  readonly throughShown: string;
  readonly reconciling: readonly string[];
}
