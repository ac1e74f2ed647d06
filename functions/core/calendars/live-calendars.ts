// Calendars a gate reads live, from an S3 object or an HTTPS URL: re-read at each evaluation with
// the ETag of the last good copy (If-None-Match; 304 confirms the copy), bounded in size and time,
// the last good copy kept in the table with when its source last confirmed it. A read that fails,
// or text that does not parse exactly as an inline calendar must, keeps the last good copy and
// says why; a copy older than the calendar's maxStaleness (or none at all) closes the gate.
import type { Clock } from '../clock.ts';
import { describeCalendarSource } from '../config/calendar-sources.ts';
import { formatDuration, type CalendarSource, type Gate, type LiveGateCalendar } from '../config/index.ts';
import { formatBytes, LIVE_CALENDAR_LIMITS } from '../limits.ts';
import { getCalendarCopy, putCalendarCopy, storedSize, type CalendarCopy } from '../store/calendar-copies.ts';
import type { TableClient } from '../store/table-client.ts';
import { calendarTextPeriods } from './calendars.ts';
import type { ClosedPeriod } from './closed-periods.ts';

/** What a source answered a conditional read with. */
export type CalendarFetch =
  | { readonly status: 'unchanged' }
  | { readonly status: 'changed'; readonly text: string; readonly etag?: string };

/**
 * Reads a calendar's source: its text when it differs from `etag` (or no ETag is given), or
 * `unchanged` (304). Throws an Error saying why it cannot be read (denied, missing, too large,
 * too slow, a refused host).
 */
export type ReadCalendarSource = (source: CalendarSource, etag: string | undefined) => Promise<CalendarFetch>;

/** The readers of each kind of source, passed in (the S3 client in AWS, the stand-in locally). */
export interface CalendarSourceReaders {
  readonly s3?: ReadCalendarSource;
  readonly https?: ReadCalendarSource;
}

/** A live calendar as `sluice gates` names it: its source, its last good copy's ETag and age, and whether it is stale. */
export interface LiveCalendarReport {
  readonly name: string;
  readonly source: string;
  readonly etag?: string;
  /** When its source last confirmed the copy in use (ISO 8601); absent: no good copy was ever read. */
  readonly confirmedAt?: string;
  /** ms since then, on the reader's clock. */
  readonly ageMs?: number;
  readonly maxStalenessMs: number;
  /** No good copy, or one older than maxStalenessMs: the gate counts as closed. */
  readonly stale: boolean;
  /** Why this evaluation's read did not give a new good copy (unreadable, or refused), if it did not. */
  readonly problem?: string;
}

/** One live calendar as read for one evaluation: its report and, while not stale, the text to expand. */
export interface LiveCalendarRead {
  readonly report: LiveCalendarReport;
  readonly ics?: string;
}

/** Reads one live calendar of a gate (refreshing its stored copy). */
export type LiveCalendarReader = (gate: string, calendar: LiveGateCalendar) => Promise<LiveCalendarRead>;

export interface LiveCalendarDeps {
  readonly db: TableClient;
  /** The real time of reads: ages count on it (not the instant a gate is evaluated at, which `--at` moves). */
  readonly clock: Clock;
  readonly sources: CalendarSourceReaders;
}

/** A reader of live calendars over `deps`: the table keeps the last good copies. */
export function liveCalendarReader(deps: LiveCalendarDeps): LiveCalendarReader {
  return async (gate, calendar) => {
    const source = describeCalendarSource(calendar.source);
    const stored = await getCalendarCopy(deps.db, gate, source);
    const { copy, problem } = await refresh(deps, gate, calendar, source, stored);
    const now = deps.clock.now().getTime();
    const ageMs = copy ? Math.max(0, now - Date.parse(copy.confirmedAt)) : undefined;
    const stale = ageMs === undefined || ageMs > calendar.maxStalenessMs;
    return {
      report: {
        name: calendar.name,
        source,
        ...(copy?.etag !== undefined && { etag: copy.etag }),
        ...(copy && { confirmedAt: copy.confirmedAt }),
        ...(ageMs !== undefined && { ageMs }),
        maxStalenessMs: calendar.maxStalenessMs,
        stale,
        ...(problem !== undefined && { problem }),
      },
      ...(!stale && copy && { ics: copy.ics }),
    };
  };
}

/** The copy to use after one conditional read of the source, and why the read gave none, if so. */
async function refresh(
  deps: LiveCalendarDeps,
  gate: string,
  calendar: LiveGateCalendar,
  source: string,
  stored: CalendarCopy | undefined,
): Promise<{ copy?: CalendarCopy; problem?: string }> {
  const read = 's3' in calendar.source ? deps.sources.s3 : deps.sources.https;
  let answer: CalendarFetch;
  try {
    if (!read) throw new Error(`no ${'s3' in calendar.source ? 'S3' : 'HTTPS'} reader was given to read it`);
    answer = await read(calendar.source, stored?.etag);
  } catch (error) {
    return { copy: stored, problem: `could not be read: ${(error as Error).message}` };
  }
  const now = deps.clock.now().toISOString();
  if (answer.status === 'unchanged') {
    if (!stored) return { problem: 'answered 304 Not Modified to a read without an ETag' };
    const confirmed = { ...stored, confirmedAt: now };
    await keep(deps.db, gate, confirmed);
    return { copy: confirmed };
  }
  const refused = await textProblem(answer.text, calendar);
  if (refused)
    return {
      copy: stored,
      problem: `was read${answer.etag !== undefined ? ` (ETag ${answer.etag})` : ''} but refused: it ${refused}`,
    };
  const copy: CalendarCopy = {
    source,
    ics: answer.text,
    ...(answer.etag !== undefined && { etag: answer.etag }),
    readAt: now,
    confirmedAt: now,
  };
  await keep(deps.db, gate, copy);
  return { copy };
}

/**
 * Stores the copy for every function and run; a reader that may not write the table (an operator
 * with grantRead running `sluice gates`) still uses what it read, without storing it.
 */
async function keep(db: TableClient, gate: string, copy: CalendarCopy): Promise<void> {
  try {
    await putCalendarCopy(db, gate, copy);
  } catch (error) {
    if ((error as Error).name !== 'AccessDeniedException') throw error;
  }
}

/** Why a calendar's text read from its source is refused: the checks an inline calendar's text passes at parse. */
async function textProblem(text: string, calendar: LiveGateCalendar): Promise<string | undefined> {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > LIVE_CALENDAR_LIMITS.maxBytes)
    return `is ${formatBytes(bytes)}, more than ${formatBytes(LIVE_CALENDAR_LIMITS.maxBytes)}`;
  const { calendarProblem } = await import('../config/icalendar.ts');
  const problem = calendarProblem(text, calendar.timeZone, Infinity);
  if (problem) return problem;
  const stored = storedSize(text);
  if (stored > LIVE_CALENDAR_LIMITS.maxStoredBytes)
    return `takes ${formatBytes(stored)} gzipped, more than the ${formatBytes(LIVE_CALENDAR_LIMITS.maxStoredBytes)} its copy may take in the table`;
  return undefined;
}

/**
 * A gate's live calendars, read through `read`, as closed periods around `at`, with their reports.
 * A calendar whose copy is stale (or that has none, or no reader) closes the gate from `at` on,
 * naming it and why.
 */
export async function liveCalendarPeriods(
  gate: Gate,
  at: Date,
  read: LiveCalendarReader | undefined,
): Promise<{ periods: ClosedPeriod[]; reports: LiveCalendarReport[] }> {
  const live = (gate.calendars ?? []).filter(
    (calendar): calendar is LiveGateCalendar => 'source' in calendar,
  );
  const results = await Promise.all(
    live.map(async (calendar) => {
      const named = `calendar ${JSON.stringify(calendar.name)} (${describeCalendarSource(calendar.source)})`;
      let result: LiveCalendarRead;
      try {
        if (!read) throw new Error('no reader of live calendars was given');
        result = await read(gate.name, calendar);
      } catch (error) {
        const reason = `${named} could not be read (${(error as Error).message}); the gate counts as closed until it can be`;
        return {
          periods: [{ start: at.getTime(), end: Infinity, cause: 'calendar' as const, reason }],
          report: {
            name: calendar.name,
            source: describeCalendarSource(calendar.source),
            maxStalenessMs: calendar.maxStalenessMs,
            stale: true,
            problem: (error as Error).message,
          },
        };
      }
      const { report, ics } = result;
      if (ics === undefined)
        return {
          periods: [
            {
              start: at.getTime(),
              end: Infinity,
              cause: 'calendar' as const,
              reason: staleReason(named, report),
            },
          ],
          report,
        };
      const periods = await calendarTextPeriods(
        calendar,
        ics,
        at,
        'the gate counts as closed until a copy that can be is read',
      );
      return { periods, report };
    }),
  );
  return {
    periods: results.flatMap((result) => result.periods),
    reports: results.map((result) => result.report),
  };
}

/** Why a stale calendar closes its gate. */
function staleReason(named: string, report: LiveCalendarReport): string {
  const last = report.problem ? ` (${report.problem})` : '';
  if (report.ageMs === undefined)
    return `${named} has no good copy yet${last}; the gate counts as closed until one is read`;
  return `${named}: its last good copy is ${age(report.ageMs)} old, past its maxStaleness of ${formatDuration(report.maxStalenessMs)}${last}; the gate counts as closed until it is read again`;
}

/** `read 3m ago, ETag "abc"; stale` — the report as one line. */
export function describeLiveCalendar(report: LiveCalendarReport): string {
  const copy =
    report.ageMs === undefined
      ? 'no good copy'
      : `last good copy ${age(report.ageMs)} old${report.etag !== undefined ? ` (ETag ${report.etag})` : ''}`;
  const state = report.stale
    ? `STALE: closes the gate (past ${formatDuration(report.maxStalenessMs)})`
    : `fresh (stale after ${formatDuration(report.maxStalenessMs)})`;
  return `calendar ${JSON.stringify(report.name)} from ${report.source}: ${copy}, ${state}${report.problem ? `; ${report.problem}` : ''}`;
}

/** An age to the second: `1h2m3s`. */
const age = (ms: number): string => formatDuration(Math.floor(ms / 1000) * 1000);

/**
 * A source's body as UTF-8 text, read until `maxBytes` (more is refused as it streams in, the
 * stream destroyed) or until `signal` aborts. Text that is not UTF-8 is refused.
 */
export async function readBounded(
  body: AsyncIterable<Uint8Array> & { destroy?: () => void },
  maxBytes: number,
  what: string,
  signal: AbortSignal,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (signal.aborted) throw signal.reason as Error;
      size += chunk.length;
      if (size > maxBytes)
        throw new Error(`${what} is more than ${formatBytes(maxBytes)}: refused after reading that much`);
      chunks.push(chunk);
    }
  } catch (error) {
    body.destroy?.();
    throw signal.aborted ? (signal.reason as Error) : error;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new Error(`${what} is not UTF-8 text: an iCalendar file is`);
  }
}
