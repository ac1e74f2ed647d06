// Stand-ins for Lambda's asynchronous invocations and EventBridge Scheduler's one-time schedules,
// in this process: the reconcile function run as deployed, by the scale bench and the fleet demo.
import type { RetryTimer } from '../functions/core/reconcile/retry.ts';

/**
 * Lambda's asynchronous invocations, in this process: invocations queue and at most `concurrency`
 * run at once (the function's concurrency), each its own call of the handler.
 */
export class SimLambda<E> {
  private readonly queue: E[] = [];
  private running = 0;
  private idle: (() => void)[] = [];
  /** Invocations accepted (async Invoke requests and schedule firings). */
  invocations = 0;
  peakRunning = 0;

  constructor(
    private readonly concurrency: number,
    private readonly run: (event: E, id: number) => Promise<void>,
  ) {}

  /** An asynchronous Invoke: queued, answered at once. */
  invoke(event: E): void {
    this.invocations++;
    this.queue.push(event);
    this.pump();
  }

  /** Resolves once nothing is queued or running. */
  drained(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const event = this.queue.shift()!;
      this.running++;
      this.peakRunning = Math.max(this.peakRunning, this.running);
      const id = this.invocations;
      void this.run(event, id)
        .catch((error: unknown) =>
          process.stderr.write(`[lambda] invocation ${id} failed: ${String(error)}\n`),
        )
        .finally(() => {
          this.running--;
          this.pump();
          if (this.running === 0 && this.queue.length === 0)
            for (const resolve of this.idle.splice(0)) resolve();
        });
    }
  }
}

/**
 * EventBridge Scheduler's one-time schedules, in this process: a retry is created (counted as one
 * CreateSchedule) and fires at the whole minute Scheduler would fire it, as an invocation
 * (`granularityMs` 1,000: at the whole second, for a demo's soak of seconds).
 */
export function simScheduler(
  fire: (delivery: string) => void,
  granularityMs = 60_000,
): RetryTimer & {
  readonly created: () => number;
  readonly pending: () => number;
  /** Deletes the schedules that have not fired. */
  readonly cancel: () => void;
} {
  let created = 0;
  const timers = new Set<NodeJS.Timeout>();
  return {
    created: () => created,
    pending: () => timers.size,
    cancel: () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
    retryAt: async (delivery, at) => {
      created++;
      const firing = new Date(Math.ceil(at.getTime() / granularityMs) * granularityMs);
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          fire(delivery);
        },
        Math.max(0, firing.getTime() - Date.now()),
      );
      timers.add(timer);
      return firing;
    },
  };
}
