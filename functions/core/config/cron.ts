import { Cron } from 'croner';

/** An EventBridge Scheduler cron expression evaluated in an IANA time zone, the way Scheduler fires it. */
export interface CronSchedule {
  readonly expression: string;
  readonly timeZone: string;
  /** The first time after `after` (exclusive) the schedule fires, or undefined if it never does again. */
  next(after: Date): Date | undefined;
  /** The last time at or before `at` the schedule fired, no earlier than `notBefore`; undefined if none. */
  previous(at: Date, notBefore: Date): Date | undefined;
}

export class CronError extends Error {
  override readonly name = 'CronError';
}

const FIELDS = ['minutes', 'hours', 'day-of-month', 'month', 'day-of-week', 'year'] as const;
const EXAMPLE = '"0 0 ? * FRI *"';
const ALLOWED: Record<(typeof FIELDS)[number], RegExp> = {
  minutes: /^[0-9*,/-]+$/,
  hours: /^[0-9*,/-]+$/,
  'day-of-month': /^([0-9*,/?-]+|L|LW|\d{1,2}W)$/i,
  month: /^[0-9A-Za-z*,/-]+$/,
  'day-of-week': /^([0-9A-Za-z*,/?-]+|[1-7A-Za-z]{1,3}#[1-5]|[1-7A-Za-z]{0,3}L)$/,
  year: /^[0-9*,/-]+$/,
};
/** How far apart two instants with the same wall-clock time can be around a DST change (Lord Howe: 30 min, Troll: 2 h). */
const REPEAT_STEP_MS = 15 * 60_000;
const REPEAT_SPAN_STEPS = 8;
const MAX_SKIPS = 1_000;

/** `cron(0 0 ? * FRI *)` → `0 0 ? * FRI *`, with single spaces. */
export function unwrapCron(expression: string): string {
  const inner = /^cron\((.*)\)$/s.exec(expression.trim())?.[1] ?? expression;
  return inner.trim().split(/\s+/).join(' ');
}

/** The problem with an expression's shape (EventBridge's rules), or undefined when it has none. */
function shapeProblem(fields: readonly string[], expression: string): string | undefined {
  if (/^(rate|at)\(/.test(expression.trim()))
    return `"${expression}": only cron expressions are supported, not rate() or at()`;
  if (fields.length !== 6) {
    return `"${expression}" has ${fields.length} fields; an EventBridge cron expression has six: ${FIELDS.join(' ')} (e.g. ${EXAMPLE})`;
  }
  const bad = fields.findIndex((field, index) => !ALLOWED[FIELDS[index]!].test(field));
  if (bad >= 0) return `"${expression}": the ${FIELDS[bad]} field "${fields[bad]}" is not valid`;
  const [dayOfMonth, dayOfWeek] = [fields[2], fields[4]];
  if (dayOfMonth === '?' && dayOfWeek === '?')
    return `"${expression}": day-of-month and day-of-week cannot both be "?" (e.g. ${EXAMPLE})`;
  if (dayOfMonth !== '?' && dayOfWeek !== '?')
    return `"${expression}": one of day-of-month and day-of-week must be "?" (e.g. ${EXAMPLE})`;
  const years = fields[5]!.match(/\d+/g) ?? [];
  const badYear = years.find((year) => Number(year) < 1970 || Number(year) > 2199);
  if (badYear && !fields[5]!.includes('/')) return `"${expression}": year ${badYear} is outside 1970-2199`;
  return undefined;
}

/** EventBridge fields → croner's seven-part pattern (seconds first, Quartz weekday numbers). */
function cronerPattern(fields: readonly string[]): string {
  // A lone `L` in day-of-week is the last day of the week, Saturday (7), as in Quartz.
  const dayOfWeek = fields[4]!.toUpperCase() === 'L' ? '7' : fields[4]!;
  return ['0', fields[0], fields[1], fields[2], fields[3], dayOfWeek, fields[5]].join(' ');
}

// Building an Intl.DateTimeFormat costs about a millisecond (formatting with one, microseconds),
// so each zone's is built once. Only names that are zones are kept: a few hundred at most.
const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

/** The problem with an IANA time zone name, or undefined when it is one. */
export function timeZoneProblem(timeZone: string): string | undefined {
  try {
    wallClockFormat(timeZone);
    return undefined;
  } catch {
    return `"${timeZone}" is not an IANA time zone (e.g. UTC, Europe/Berlin)`;
  }
}

/** The problem with a cron expression and time zone, or undefined when Scheduler would accept them. */
export function cronProblem(expression: string, timeZone = 'UTC'): string | undefined {
  try {
    parseCron(expression, timeZone);
    return undefined;
  } catch (error) {
    if (error instanceof CronError) return error.message;
    throw error;
  }
}

/**
 * Parses an EventBridge Scheduler cron expression (`min hour day-of-month month day-of-week year`,
 * with `?`, `L`, `W` and `#`) for evaluation in `timeZone`. Like Scheduler, a time that does not
 * exist because clocks jump forward is skipped, and a time that occurs twice fires once.
 */
export function parseCron(expression: string, timeZone = 'UTC'): CronSchedule {
  const unwrapped = unwrapCron(expression);
  const key = `${unwrapped}\u0000${timeZone}`;
  const known = schedules.get(key);
  if (known) return known;
  const schedule = cachedFirings(evaluateCron(unwrapped, expression, timeZone));
  if (schedules.size >= MAX_SCHEDULES) schedules.delete(schedules.keys().next().value!);
  schedules.set(key, schedule);
  return schedule;
}

/**
 * Parsed schedules by expression and time zone (a schedule is a pure function of the two, so
 * sharing one is exact), each with the firings it has found (cachedFirings). Bounded: the oldest
 * goes first.
 */
const schedules = new Map<string, CronSchedule>();
const MAX_SCHEDULES = 1_000;

/** The schedule computed by croner at each call (see parseCron). */
function evaluateCron(unwrapped: string, expression: string, timeZone: string): CronSchedule {
  const fields = unwrapped.split(' ');
  const problem = shapeProblem(fields, expression) ?? timeZoneProblem(timeZone);
  if (problem) throw new CronError(problem);
  let cron: Cron;
  try {
    cron = new Cron(cronerPattern(fields), {
      timezone: timeZone,
      mode: '7-part',
      alternativeWeekdays: true,
      sloppyRanges: true,
      paused: true,
    });
  } catch (error) {
    const detail = (error as Error).message.replace(/^CronPattern:\s*/, '');
    throw new CronError(`"${expression}": ${detail}`);
  }
  const wallClock = wallClockFormat(timeZone);
  return {
    expression: unwrapped,
    timeZone,
    next(after) {
      let cursor = after;
      for (let skips = 0; skips < MAX_SKIPS; skips++) {
        const candidate = cron.nextRun(cursor);
        if (!candidate) return undefined;
        cursor = candidate;
        if (!cron.match(candidate)) continue; // moved out of a spring-forward gap: Scheduler skips it
        if (isRepeatedWallClock(candidate, wallClock)) continue; // second pass of a fall-back hour
        return candidate;
      }
      return undefined;
    },
    previous(at, notBefore) {
      let cursor = new Date(at.getTime() + 1); // previousRuns excludes its reference
      for (let skips = 0; skips < MAX_SKIPS; skips++) {
        const candidate = cron.previousRuns(1, cursor)[0];
        if (!candidate || candidate < notBefore) return undefined;
        cursor = candidate;
        if (!cron.match(candidate)) continue;
        if (isRepeatedWallClock(candidate, wallClock)) continue;
        return candidate;
      }
      return undefined;
    },
  };
}

/** `timeZone`'s wall clock to the minute; throws a RangeError when `timeZone` is not a zone. */
function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
  let format = wallClockFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    wallClockFormats.set(timeZone, format);
  }
  return format;
}

/** A span between firings: none lies strictly between `from` and `to`; `to` is one, and `from` when `fromFires`. */
interface Gap {
  readonly from: number;
  readonly to: number;
  readonly fromFires: boolean;
}
const MAX_GAPS = 64;

/**
 * `schedule` answering from the gaps between firings it has already found, computing (with croner,
 * about a millisecond a call) only outside them. Exact: `next(t)` is the first firing after `t` and
 * `previous(t)` the last at or before it, both over one set of firings (each candidate croner
 * enumerates, kept when it matches the pattern and its wall-clock time is not a repeat), so inside a
 * gap `[from, to)` every `next` is `to` and, when `from` fires, every `previous` is `from`. The
 * property tests of gate state check that next and previous agree (test/core/gates/properties.test.ts).
 */
function cachedFirings(schedule: CronSchedule): CronSchedule {
  const gaps: Gap[] = [];
  const gapAt = (time: number, fires: boolean): Gap | undefined =>
    gaps.find((gap) => gap.from <= time && time < gap.to && (gap.fromFires || !fires));
  const remember = (gap: Gap) => {
    if (gaps.length >= MAX_GAPS) gaps.shift();
    gaps.push(gap);
  };
  return {
    expression: schedule.expression,
    timeZone: schedule.timeZone,
    next(after) {
      const known = gapAt(after.getTime(), false);
      if (known) return new Date(known.to);
      const next = schedule.next(after);
      if (next) remember({ from: after.getTime(), to: next.getTime(), fromFires: false });
      return next;
    },
    previous(at, notBefore) {
      const known = gapAt(at.getTime(), true);
      if (known) return known.from >= notBefore.getTime() ? new Date(known.from) : undefined;
      const previous = schedule.previous(at, notBefore);
      const next = previous && schedule.next(previous);
      if (previous && next) remember({ from: previous.getTime(), to: next.getTime(), fromFires: true });
      return previous;
    },
  };
}

/** True when the same wall-clock minute already happened shortly before `instant` (clocks went back). */
function isRepeatedWallClock(instant: Date, format: Intl.DateTimeFormat): boolean {
  const local = format.format(instant);
  for (let step = 1; step <= REPEAT_SPAN_STEPS; step++) {
    if (format.format(new Date(instant.getTime() - step * REPEAT_STEP_MS)) === local) return true;
  }
  return false;
}

const SCAN_STEP_MS = 7 * 24 * 3_600_000;

/** The UTC offset of `timeZone` at `instant`, in ms (a minute's precision is enough for offsets). */
function offsetAt(format: Intl.DateTimeFormat, instant: number): number {
  const parts = Object.fromEntries(
    format.formatToParts(new Date(instant)).map((p) => [p.type, Number(p.value)]),
  );
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!);
  return wall - (instant - (((instant % 60_000) + 60_000) % 60_000));
}

/**
 * The local times (`2027-03-28T02:30`) between `from` and `to` at which the schedule would fire
 * but which do not exist in `timeZone`, clocks jumping forward over them: EventBridge Scheduler
 * does not fire then (and neither does parseCron's next). At most one per clock change.
 */
export function skippedTimes(expression: string, timeZone: string, from: Date, to: Date): string[] {
  const fields = unwrapCron(expression).split(' ');
  const problem = shapeProblem(fields, expression) ?? timeZoneProblem(timeZone);
  if (problem) throw new CronError(problem);
  // The same fields read on a clock with no changes: their wall-clock times, gap or not.
  const wallCron = new Cron(cronerPattern(fields), {
    timezone: 'UTC',
    mode: '7-part',
    alternativeWeekdays: true,
    sloppyRanges: true,
    paused: true,
  });
  const format = wallClockFormat(timeZone);
  const skipped: string[] = [];
  // A week at a time (no zone changes its clocks twice in a week), then to the minute.
  let offset = offsetAt(format, from.getTime());
  for (let start = from.getTime(); start < to.getTime(); start += SCAN_STEP_MS) {
    let [low, high] = [start, Math.min(start + SCAN_STEP_MS, to.getTime())];
    const [before, after] = [offset, offsetAt(format, high)];
    offset = after;
    if (after <= before) continue; // no change, or clocks going back (a repeated time fires once)
    while (high - low > 60_000) {
      const middle = low + Math.floor((high - low) / 2 / 60_000) * 60_000;
      if (offsetAt(format, middle) === before) low = middle;
      else high = middle;
    }
    // Wall-clock times from the change's instant read at the old offset up to it at the new one are skipped.
    const gapStart = high + before;
    const gapEnd = high + after;
    const firing = wallCron.nextRun(new Date(gapStart - 1));
    if (firing && firing.getTime() < gapEnd) skipped.push(firing.toISOString().slice(0, 16));
  }
  return skipped;
}
