import { timerSleep, type Clock } from '../../functions/core/clock.ts';

/** A clock that runs with real time and can be moved forward: a soak passes without waiting it out. */
export interface SimClock extends Clock {
  /** Moves the clock `ms` forward and tells the listeners (the scheduler fires what came due). */
  advance(ms: number): void;
  onAdvance(listener: () => void): void;
}

export function simClock(): SimClock {
  let offset = 0;
  const listeners: (() => void)[] = [];
  return {
    now: () => new Date(Date.now() + offset),
    sleep: timerSleep,
    advance: (ms) => {
      offset += ms;
      for (const listener of listeners) listener();
    },
    onAdvance: (listener) => listeners.push(listener),
  };
}
