// The guards every step of a run goes through.
import { SluiceError, type FailureReason } from '../errors.ts';
import type { Lease } from '../store/lease.ts';

/** Runs `work`, turning any error that is not already a SluiceError into one with `reason`. */
export async function step<T>(reason: FailureReason, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SluiceError) throw error;
    throw new SluiceError(reason, error instanceof Error ? error.message : String(error), { cause: error });
  }
}

export function assertLeaseHeld(lease: Lease, name: string): void {
  if (lease.lost)
    throw new SluiceError(
      'ApplyFailed',
      `lost the lease of delivery '${name}' to another run; stopping before the next change`,
    );
}
