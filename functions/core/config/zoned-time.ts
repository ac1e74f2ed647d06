// Local (wall-clock) date-times in an IANA time zone, and the instants they stand for.

/** A wall-clock date and time, without a time zone. */
export interface WallTime {
  readonly year: number;
  /** 1–12 */
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const DAY_MS = 24 * 3_600_000;

/**
 * `2026-12-24`, `2026-12-24T18:00` or `2026-12-24T18:00:00` (no offset: it is read in a time
 * zone) → its wall time, or a problem naming what is wrong.
 */
export function parseLocalDateTime(text: string): WallTime | { readonly problem: string } {
  const match = LOCAL_DATE_TIME.exec(text);
  if (!match)
    return {
      problem: `"${text}" is not a local date-time: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], without an offset (it is read in the time zone given)`,
    };
  const [year, month, day, hour = 0, minute = 0, second = 0] = match
    .slice(1)
    .map((part) => Number(part ?? 0));
  const wall = { year: year!, month: month!, day: day!, hour, minute, second };
  const check = new Date(wallMs(wall));
  if (
    month! < 1 ||
    month! > 12 ||
    check.getUTCDate() !== day ||
    check.getUTCMonth() + 1 !== month ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return { problem: `"${text}" is not a date and time that exists` };
  return wall;
}

/** The wall time read as if it were UTC, in ms since the epoch. */
export const wallMs = (wall: WallTime): number =>
  Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** How far `timeZone`'s wall clock is ahead of UTC at `instant` (ms). */
export function zoneOffsetMs(timeZone: string, instant: number): number {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(instant))
      .map((part) => [part.type, Number(part.value)]),
  ) as Record<string, number>;
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

/**
 * The instant `wall` stands for in `timeZone`. A time skipped by clocks going forward is moved
 * forward by the gap (02:30 on the day Berlin skips 02:00–03:00 is 03:30 CEST), as Temporal's
 * `compatible` reads it. A time that occurs twice (clocks going back) is its earlier occurrence
 * (`compatible`, RFC 5545), or with `later` its later one: the end of a span is read so, so that the
 * span covers every instant the wall clock shows inside it (a freeze to 02:30 on the day Berlin
 * repeats 02:00–03:00 lasts until the second 02:30, its true length).
 */
export function zonedInstant(
  wall: WallTime,
  timeZone: string,
  occurrence: 'earlier' | 'later' = 'earlier',
): number {
  const local = wallMs(wall);
  const before = local - zoneOffsetMs(timeZone, local - DAY_MS);
  const after = local - zoneOffsetMs(timeZone, local + DAY_MS);
  const valid = [before, after].filter((instant) => instant + zoneOffsetMs(timeZone, instant) === local);
  if (valid.length > 0) return occurrence === 'later' ? Math.max(...valid) : Math.min(...valid);
  return before;
}

/** The wall time `instant` shows in `timeZone`. */
export function wallTimeAt(instant: number, timeZone: string): WallTime {
  const local = new Date(instant + zoneOffsetMs(timeZone, instant));
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
  };
}

/**
 * `days` calendar days after `instant` in `timeZone`: the same wall-clock time that many days
 * later (Temporal's `add({ days })`), a repeated time read as its later occurrence (an end). A day
 * across clocks going back lasts 25 hours, across clocks going forward 23.
 */
export function addLocalDays(instant: number, days: number, timeZone: string): number {
  const wall = wallTimeAt(instant, timeZone);
  const shifted = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + days));
  const end = zonedInstant(
    {
      ...wall,
      year: shifted.getUTCFullYear(),
      month: shifted.getUTCMonth() + 1,
      day: shifted.getUTCDate(),
    },
    timeZone,
    'later',
  );
  return end + (((instant % 1000) + 1000) % 1000);
}
