// The guards every step of a run goes through.
import { SluiceError, type FailureReason } from '../errors.ts';
import { LeaseLostError } from '../store/lease.ts';

/** Runs `work`, turning any error that is not already a SluiceError into one with `reason`. */
export async function step<T>(reason: FailureReason, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SluiceError || error instanceof LeaseLostError) throw error;
    throw new SluiceError(reason, error instanceof Error ? error.message : String(error), { cause: error });
  }
}
