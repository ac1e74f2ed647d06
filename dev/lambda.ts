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

/** The time the schedules fire by; `onAdvance`: told when it jumps forward. */
export interface SchedulerClock {
  now(): Date;
  onAdvance?(listener: () => void): void;
}

const wallClock: SchedulerClock = { now: () => new Date() };

interface Schedule {
  readonly delivery: string;
  readonly at: number;
  timer?: NodeJS.Timeout;
}

/**
 * EventBridge Scheduler's one-time schedules, in this process: a retry is created (counted as one
 * CreateSchedule; one per delivery and time, as their names are) and fires at the whole minute Scheduler would fire it, as an invocation
 * (`granularityMs` 1,000: at the whole second, for a demo's soak of seconds). On a `clock` that can
 * be moved forward (the scale bench's soaks), the schedules that came due when it moves fire at once.
 */
export function simScheduler(
  fire: (delivery: string) => void,
  granularityMs = 60_000,
  clock: SchedulerClock = wallClock,
): RetryTimer & {
  readonly created: () => number;
  readonly pending: () => number;
  /** Schedules not fired yet that fire within `ms` of the clock's now. */
  readonly pendingWithin: (ms: number) => number;
  /** Deletes the schedules that have not fired. */
  readonly cancel: () => void;
} {
  let created = 0;
  const pending = new Set<Schedule>();
  const arm = (schedule: Schedule) => {
    clearTimeout(schedule.timer);
    schedule.timer = setTimeout(
      () => {
        pending.delete(schedule);
        fire(schedule.delivery);
      },
      Math.max(0, schedule.at - clock.now().getTime()),
    );
  };
  clock.onAdvance?.(() => pending.forEach(arm));
  return {
    created: () => created,
    pending: () => pending.size,
    pendingWithin: (ms) => [...pending].filter((s) => s.at <= clock.now().getTime() + ms).length,
    cancel: () => {
      for (const schedule of pending) clearTimeout(schedule.timer);
      pending.clear();
    },
    retryAt: async (delivery, at) => {
      const firing = new Date(Math.ceil(at.getTime() / granularityMs) * granularityMs);
      // Named by delivery and time, as the real ones: a second for the same one is that one.
      for (const s of pending) if (s.delivery === delivery && s.at === firing.getTime()) return firing;
      created++;
      const schedule: Schedule = { delivery, at: firing.getTime() };
      pending.add(schedule);
      arm(schedule);
      return firing;
    },
  };
}
