// Spans of time a gate is closed for whatever its requests say: dated freezes, calendar events and
// conditions read at evaluation (SSM Change Calendars). They are an input to the state computation
// (state.ts), never stored: a lost event cannot open a freeze.

/** What closes a gate for a period. */
export type ClosedPeriodCause = 'freeze' | 'calendar' | 'change-calendar';

/** A span [start, end) the gate is closed for. */
export interface ClosedPeriod {
  /** ms since the epoch. */
  readonly start: number;
  /** ms since the epoch; Infinity when its end is not known. */
  readonly end: number;
  readonly cause: ClosedPeriodCause;
  /** Says what closes the gate: `freeze "year end" (2026-12-24 to 2027-01-02, Europe/Berlin)`. */
  readonly reason: string;
}

/** The closed period covering `at`, if any; of several, the one ending last (the one that holds longest). */
export function periodCovering(periods: readonly ClosedPeriod[], at: number): ClosedPeriod | undefined {
  let best: ClosedPeriod | undefined;
  for (const period of periods)
    if (period.start <= at && at < period.end && (!best || period.end > best.end)) best = period;
  return best;
}

/**
 * When the gate stops being held by closed periods, seen from `at` inside one: the end of the
 * chain of overlapping or touching periods covering `at` (Infinity when one never ends).
 */
export function periodsEnd(periods: readonly ClosedPeriod[], at: number): number {
  let end = at;
  for (;;) {
    const covering = periodCovering(periods, end);
    if (!covering) return end;
    if (covering.end === Infinity) return Infinity;
    end = covering.end;
  }
}

/** The first instant after `after` at which a period starts or ends (Infinity when none does). */
export function nextPeriodBoundary(periods: readonly ClosedPeriod[], after: number): number {
  let next = Infinity;
  for (const period of periods) {
    if (period.start > after && period.start < next) next = period.start;
    if (period.end > after && period.end < next) next = period.end;
  }
  return next;
}
