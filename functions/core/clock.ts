/** The time source every core module takes as an argument, so tests can move time. */
export interface Clock {
  now(): Date;
  /** Waits `ms` before it resolves. A test clock may move its own time instead of waiting. */
  sleep(ms: number): Promise<void>;
}

/** Waits `ms` on a timer: what the system clock's sleep does. */
export function timerSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const systemClock: Clock = { now: () => new Date(), sleep: timerSleep };

export interface PollOptions {
  /** Whose time the timeout runs on and whose sleep waits between looks. */
  readonly clock: Clock;
  /** How long to wait between looks, in ms (a function: asked before each wait, e.g. for jitter). */
  readonly every: number | (() => number);
  /** How long to keep looking, in ms from the first look. */
  readonly timeout: number;
  /** One look: true ends the poll. An error it throws ends the poll with that error. */
  readonly until: () => Promise<boolean>;
  /** Told before each wait between looks (not after the last look). */
  readonly waiting?: () => void;
}

/**
 * Looks with `until` at once and then every `every` ms until it returns true (resolves true), or
 * until a look that returns false is made after `timeout` ms have passed on `clock` (resolves
 * false: the caller says what timed out).
 */
export async function poll({ clock, every, timeout, until, waiting }: PollOptions): Promise<boolean> {
  const deadline = clock.now().getTime() + timeout;
  for (;;) {
    if (await until()) return true;
    if (clock.now().getTime() > deadline) return false;
    waiting?.();
    await clock.sleep(typeof every === 'number' ? every : every());
  }
}
