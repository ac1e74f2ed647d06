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
  /** Deleting a CRD or Namespace would take objects with it that this run is not pruning. */
  | 'PruneWouldCascade'
  /** An object is owned by another registered delivery. */
  | 'OwnershipConflict'
  | 'GateClosed';

/** An error the engine reports in status: `reason` classifies it, `message` names the thing. */
export class SluiceError extends Error {
  override readonly name = 'SluiceError';
  constructor(
    readonly reason: FailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
