import type { Delivery } from '../config/index.ts';

/** Arranges one more reconcile of a delivery at a given time. */
export interface RetryTimer {
  /** Resolves to the time the retry will run (Scheduler fires on whole minutes). */
  retryAt(delivery: string, at: Date): Promise<Date>;
}

/**
 * When a failed run is retried, as Flux's `retryInterval`: that long after the failure. Only
 * when it comes before the next regular run (`interval`); otherwise that run is the retry.
 */
export function retryTime(
  delivery: Pick<Delivery, 'intervalMs' | 'retryIntervalMs'>,
  failedAt: Date,
): Date | undefined {
  const retry = delivery.retryIntervalMs;
  if (retry === undefined || retry >= delivery.intervalMs) return undefined;
  return new Date(failedAt.getTime() + retry);
}
