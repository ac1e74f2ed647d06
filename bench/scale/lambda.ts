import type { RetryTimer } from '../../functions/core/reconcile/retry.ts';
import type { SimClock } from './sim-clock.ts';

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
        .catch((error: unknown) => process.stderr.write(`[scale] invocation failed: ${String(error)}\n`))
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
 * CreateSchedule) and fires at the whole minute Scheduler would fire it, on `clock` (moved forward,
 * the schedules that came due fire at once), as an invocation.
 */
export function simScheduler(
  fire: (delivery: string) => void,
  clock: SimClock,
): RetryTimer & {
  readonly created: () => number;
  /** Schedules not fired yet that fire within `ms` of the clock's now. */
  readonly pendingWithin: (ms: number) => number;
} {
  let created = 0;
  const pending = new Set<{ delivery: string; at: number; timer?: NodeJS.Timeout }>();
  const arm = (schedule: { delivery: string; at: number; timer?: NodeJS.Timeout }) => {
    clearTimeout(schedule.timer);
    schedule.timer = setTimeout(
      () => {
        pending.delete(schedule);
        fire(schedule.delivery);
      },
      Math.max(0, schedule.at - clock.now().getTime()),
    );
  };
  clock.onAdvance(() => pending.forEach(arm));
  return {
    created: () => created,
    pendingWithin: (ms) => [...pending].filter((s) => s.at <= clock.now().getTime() + ms).length,
    retryAt: async (delivery, at) => {
      created++;
      const minute = new Date(Math.ceil(at.getTime() / 60_000) * 60_000);
      const schedule = { delivery, at: minute.getTime() };
      pending.add(schedule);
      arm(schedule);
      return minute;
    },
  };
}
