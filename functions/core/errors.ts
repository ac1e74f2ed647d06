/**
 * Why a reconcile failed, as recorded in the delivery status (Flux's condition reasons where
 * Flux has one).
 */
export type FailureReason =
  | 'ArtifactFailed'
  | 'BuildFailed'
  | 'ValidationFailed'
  | 'ApplyFailed'
  | 'PruneFailed'
  | 'HealthCheckFailed'
  | 'PruneLimitExceeded'
  /**
   * No longer recorded (such a CRD or Namespace is now kept and the run finishes); still read in
   * statuses recorded before.
   */
  | 'PruneWouldCascade'
  /** An object is owned by another registered delivery. */
  | 'OwnershipConflict'
  | 'GateClosed';

/** An error the engine reports in status: `reason` classifies it, `message` names the thing. */
export class SluiceError extends Error {
  override readonly name: string = 'SluiceError';
  constructor(
    readonly reason: FailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A run held, not failed: it changed nothing, and goes on later (another run holds the delivery's
 * lease, its cluster has no free slot, the mass-deletion brake). Each kind sets its own `name`.
 */
export abstract class HoldError extends Error {
  abstract override readonly name: string;
}

/** A delivery named by a request, the CLI or the spec function that the table does not hold. */
export class NotRegisteredError extends Error {
  override readonly name = 'NotRegisteredError';
  constructor(
    readonly delivery: string,
    hint = '',
  ) {
    super(`delivery '${delivery}' is not registered${hint}`);
  }
}
