import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long long-running synchronous work may go on before it lets timers and I/O run. */
export const DEFAULT_SLICE_MS = 10;

/**
 * Lets the event loop turn during long CPU work (parsing a large build), so that timers such as
 * the lease renewal and the I/O they start are not held up: call `pause()` often; it yields only
 * once `sliceMs` of work have passed since the last turn. `sliceMs: 0` yields on every call.
 */
export interface Pacer {
  pause(): Promise<void>;
}

export function pacer(sliceMs: number = DEFAULT_SLICE_MS): Pacer {
  let since = performance.now();
  return {
    async pause() {
      if (performance.now() - since < sliceMs) return;
      await nextTurn();
      since = performance.now();
    },
  };
}

/** Runs `work` over `items` with at most `limit` in flight; rejects with the first error after all settle. */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        errors.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length > 0) throw errors[0];
}
