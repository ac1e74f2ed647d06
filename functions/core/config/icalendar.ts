// RFC 5545 calendars (iCalendar) as closed periods: parsing and checking them (at config parse and
// synth), and their events' occurrences over a span of time (at evaluation). ical.js does the
// parsing and the recurrence expansion (RRULE, RDATE, EXDATE, RECURRENCE-ID); times are turned
// into instants here: a TZID by the calendar's own VTIMEZONE when it has one, else as an IANA
// time zone; floating times and all-day dates in the calendar's `timeZone`.
import ICAL from 'ical.js';
import { MAX_WINDOW_MS } from './defaults.ts';
import { zonedInstant, wallMs } from './zoned-time.ts';

/** The longest calendar text a gate may hold (it is stored in the gate's spec item). */
export const MAX_CALENDAR_CHARS = 100_000;
/** How many occurrences of one event are stepped through at most, from its start, in one expansion. */
export const MAX_OCCURRENCE_STEPS = 100_000;
/** Events recurring more often than daily are refused: a freeze calendar names days and windows. */
const REFUSED_FREQUENCIES = new Set(['SECONDLY', 'MINUTELY', 'HOURLY']);
/** How far a calendar is expanded when it is checked: every rule must stay within the step bound until then. */
const CHECKED_UNTIL = Date.UTC(2100, 0, 1);

/** One occurrence of a calendar's event: the span it closes the gate for. */
export interface CalendarOccurrence {
  readonly start: number;
  readonly end: number;
  readonly summary: string;
}

export class CalendarError extends Error {
  override readonly name = 'CalendarError';
}

interface ParsedCalendar {
  /** Each recurring set: its master event with its exceptions (RECURRENCE-ID), or a lone event. */
  readonly events: readonly ICAL.Event[];
  readonly zones: ReadonlyMap<string, ICAL.Timezone>;
}

const parsed = new Map<string, ParsedCalendar>();

/** The problem with a calendar's text read in `timeZone`, or undefined when it can be evaluated. */
export function calendarProblem(ics: string, timeZone: string): string | undefined {
  if (ics.length > MAX_CALENDAR_CHARS)
    return `is ${ics.length} characters; at most ${MAX_CALENDAR_CHARS} are stored with the gate`;
  try {
    const calendar = parseCalendar(ics);
    for (const event of calendar.events) checkEvent(event, calendar, timeZone);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * The occurrences of the calendar's events that overlap [from, to) (ms), by start. Throws a
 * CalendarError when the text cannot be parsed or a rule steps past MAX_OCCURRENCE_STEPS.
 */
export function calendarOccurrences(
  ics: string,
  timeZone: string,
  from: number,
  to: number,
): CalendarOccurrence[] {
  const calendar = parseCalendar(ics);
  const found = calendar.events.flatMap((event) => occurrencesOf(event, calendar, timeZone, from, to));
  return found.sort((a, b) => a.start - b.start);
}

function parseCalendar(ics: string): ParsedCalendar {
  const known = parsed.get(ics);
  if (known) return known;
  let root: ICAL.Component;
  try {
    root = new ICAL.Component(ICAL.parse(ics) as unknown[]);
  } catch (error) {
    throw new CalendarError(`is not iCalendar (RFC 5545): ${(error as Error).message}`);
  }
  if (root.name !== 'vcalendar') throw new CalendarError(`is a ${root.name.toUpperCase()}, not a VCALENDAR`);
  const zones = new Map(
    root.getAllSubcomponents('vtimezone').map((component) => {
      const zone = new ICAL.Timezone(component);
      return [zone.tzid, zone] as const;
    }),
  );
  const components = root.getAllSubcomponents('vevent');
  if (components.length === 0) throw new CalendarError('has no events (VEVENT): it would close nothing');
  const masters = components.filter((component) => !component.hasProperty('recurrence-id'));
  const exceptions = components.filter((component) => component.hasProperty('recurrence-id'));
  const events = masters.map((master) => {
    const uid = master.getFirstPropertyValue('uid');
    const own = exceptions.filter((exception) => exception.getFirstPropertyValue('uid') === uid);
    return new ICAL.Event(master, { exceptions: own, strictExceptions: true });
  });
  const calendar = { events, zones };
  parsed.set(ics, calendar);
  return calendar;
}

const describe = (event: ICAL.Event): string =>
  `event ${JSON.stringify(event.summary ?? event.uid ?? '(no summary)')}`;

/** Throws a CalendarError naming the event when it cannot be evaluated. */
function checkEvent(event: ICAL.Event, calendar: ParsedCalendar, timeZone: string): void {
  const what = describe(event);
  if (!event.component.hasProperty('dtstart')) throw new CalendarError(`${what} has no DTSTART`);
  for (const component of [event.component, ...Object.values(event.exceptions).map((e) => e.component)])
    for (const name of ['dtstart', 'dtend']) {
      const tzid = component.getFirstProperty(name)?.getParameter('tzid');
      if (typeof tzid === 'string' && !calendar.zones.has(tzid) && !isIanaZone(tzid))
        throw new CalendarError(
          `${what}: TZID ${JSON.stringify(tzid)} is neither a VTIMEZONE of the calendar nor an IANA time zone`,
        );
    }
  const start = instantOf(event.startDate, tzidOf(event.component), calendar, timeZone);
  if (start < 0) throw new CalendarError(`${what} starts before 1970`);
  const end = instantOf(event.endDate, tzidOf(event.component, 'dtend'), calendar, timeZone);
  if (!(end > start))
    throw new CalendarError(`${what} has no length: give it a DTEND after its DTSTART, or a DURATION`);
  if (end - start > MAX_WINDOW_MS) throw new CalendarError(`${what} lasts more than a year`);
  for (const rule of event.component.getAllProperties('rrule')) {
    const recur = rule.getFirstValue() as ICAL.Recur;
    if (REFUSED_FREQUENCIES.has(recur.freq))
      throw new CalendarError(`${what}: RRULE FREQ=${recur.freq} is refused; events may recur at most daily`);
  }
  occurrencesOf(event, calendar, timeZone, CHECKED_UNTIL, CHECKED_UNTIL);
}

function occurrencesOf(
  event: ICAL.Event,
  calendar: ParsedCalendar,
  timeZone: string,
  from: number,
  to: number,
): CalendarOccurrence[] {
  if (event.component.getFirstPropertyValue('status') === 'CANCELLED') return [];
  const occurrence = (details: { startDate: ICAL.Time; endDate: ICAL.Time; item: ICAL.Event }) => {
    const tzid = tzidOf(details.item.component);
    const start = instantOf(details.startDate, tzid, calendar, timeZone);
    const end = instantOf(
      details.endDate,
      tzidOf(details.item.component, 'dtend') ?? tzid,
      calendar,
      timeZone,
    );
    return { start, end, summary: details.item.summary ?? event.summary ?? '' };
  };
  if (!event.isRecurring()) {
    const only = occurrence({ startDate: event.startDate, endDate: event.endDate, item: event });
    return only.start < to && only.end > from ? [only] : [];
  }
  const found: CalendarOccurrence[] = [];
  const iterator = event.iterator();
  for (let step = 0; ; step++) {
    if (step >= MAX_OCCURRENCE_STEPS)
      throw new CalendarError(
        `${describe(event)} recurs more than ${MAX_OCCURRENCE_STEPS} times before ${new Date(to).toISOString()}`,
      );
    const next = iterator.next();
    if (!next) break;
    const details = event.getOccurrenceDetails(next);
    if (details.item.component.getFirstPropertyValue('status') === 'CANCELLED') continue;
    const found1 = occurrence(details);
    // Occurrences come in order of their recurrence id; a moved one may start later than the next.
    if (instantOf(next, tzidOf(event.component), calendar, timeZone) >= to + MAX_WINDOW_MS) break;
    if (found1.start < to && found1.end > from) found.push(found1);
  }
  return found;
}

function tzidOf(component: ICAL.Component, property = 'dtstart'): string | undefined {
  const tzid = component.getFirstProperty(property)?.getParameter('tzid');
  return typeof tzid === 'string' ? tzid : undefined;
}

/** The instant a calendar time stands for (see the file's header). */
function instantOf(
  time: ICAL.Time,
  tzid: string | undefined,
  calendar: ParsedCalendar,
  timeZone: string,
): number {
  const wall = {
    year: time.year,
    month: time.month,
    day: time.day,
    hour: time.isDate ? 0 : time.hour,
    minute: time.isDate ? 0 : time.minute,
    second: time.isDate ? 0 : time.second,
  };
  if (time.isDate) return zonedInstant(wall, timeZone);
  if (time.zone?.tzid === 'UTC') return wallMs(wall);
  const zone = tzid === undefined ? undefined : calendar.zones.get(tzid);
  if (zone) return wallMs(wall) - zone.utcOffset(time) * 1000;
  return zonedInstant(wall, tzid ?? timeZone);
}

function isIanaZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
