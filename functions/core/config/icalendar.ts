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
  /** The calendar's X-WR-TIMEZONE (the zone its floating times were written in), if it says one. */
  readonly wrTimeZone?: string;
}

const parsed = new Map<string, ParsedCalendar>();

/**
 * The problem with a calendar's text read in `timeZone`, or undefined when it can be evaluated.
 * `maxChars`: the longest text accepted (a live calendar's is bounded by its read instead).
 */
export function calendarProblem(
  ics: string,
  timeZone: string,
  maxChars: number = MAX_CALENDAR_CHARS,
): string | undefined {
  if (ics.length > maxChars)
    return `is ${ics.length} characters; at most ${maxChars} are stored with the gate`;
  try {
    const calendar = parseCalendar(ics);
    for (const event of calendar.events) checkEvent(event, calendar, timeZone);
    const wrZone = calendar.wrTimeZone;
    if (wrZone !== undefined && wrZone !== timeZone)
      return `says X-WR-TIMEZONE ${JSON.stringify(wrZone)}, but is read in time zone ${JSON.stringify(timeZone)}: set the calendar's timeZone to ${JSON.stringify(wrZone)}`;
    if (!calendar.events.some((event) => occurs(event, calendar, timeZone)))
      return `has no occurrence between 1970 and ${new Date(CHECKED_UNTIL).getUTCFullYear()} (every event is cancelled or excluded): it would close nothing`;
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
  if (typeof root.name !== 'string')
    throw new CalendarError('holds more than one VCALENDAR: give one calendar, with all its events');
  if (root.name !== 'vcalendar') throw new CalendarError(`is a ${root.name.toUpperCase()}, not a VCALENDAR`);
  checkUnderstood(root);
  const zones = new Map(
    root.getAllSubcomponents('vtimezone').map((component) => {
      const zone = new ICAL.Timezone(component);
      return [zone.tzid, zone] as const;
    }),
  );
  const components = root.getAllSubcomponents('vevent');
  if (components.length === 0) throw new CalendarError('has no events (VEVENT): it would close nothing');
  const masters = components.filter((component) => !component.hasProperty('recurrence-id'));
  const instances = components.filter((component) => component.hasProperty('recurrence-id'));
  // ical.js keeps one instance per UID and RECURRENCE-ID (as it prints it): the others would be dropped.
  const instanceKeys = new Set<string>();
  for (const instance of instances) {
    const key = JSON.stringify([
      instance.getFirstPropertyValue('uid'),
      String(instance.getFirstPropertyValue('recurrence-id')),
    ]);
    if (instanceKeys.has(key))
      throw new CalendarError(
        `has two instances of ${describeComponent(instance)} with RECURRENCE-ID ${String(instance.getFirstPropertyValue('recurrence-id'))}: only one would be read; keep one`,
      );
    instanceKeys.add(key);
  }
  const masterUids = new Set<unknown>();
  for (const master of masters) {
    const uid = master.getFirstPropertyValue('uid');
    if (uid !== null && masterUids.has(uid))
      throw new CalendarError(`has two VEVENTs with UID ${JSON.stringify(uid)} and no RECURRENCE-ID`);
    masterUids.add(uid);
  }
  const events = [
    ...masters.map((master) => {
      const uid = master.getFirstPropertyValue('uid');
      const own = instances.filter((instance) => instance.getFirstPropertyValue('uid') === uid);
      return new ICAL.Event(master, { exceptions: own, strictExceptions: true });
    }),
    // A single instance whose master is not in the file ("this occurrence only") is an event of
    // its own: its DTSTART and DTEND (or DURATION) define it (RFC 5545 3.8.4.4).
    ...instances
      .filter((instance) => !masterUids.has(instance.getFirstPropertyValue('uid')))
      .map((instance) => new ICAL.Event(instance)),
  ];
  const wrZone = root.getFirstPropertyValue('x-wr-timezone');
  const calendar = { events, zones, ...(wrZone !== null && { wrTimeZone: String(wrZone) }) };
  parsed.set(ics, calendar);
  return calendar;
}

/** Properties read or safely ignored (informational), per component; `X-` properties are ignorable. */
const UNDERSTOOD: Record<string, ReadonlySet<string>> = {
  vcalendar: new Set([
    'version',
    'prodid',
    'calscale',
    'method',
    'name',
    'description',
    'color',
    'url',
    'last-modified',
    'refresh-interval',
    'source',
    'uid',
    'image',
  ]),
  vevent: new Set([
    'uid',
    'dtstamp',
    'dtstart',
    'dtend',
    'duration',
    'rrule',
    'rdate',
    'exdate',
    'recurrence-id',
    'status',
    'summary',
    'description',
    'location',
    'categories',
    'class',
    'created',
    'last-modified',
    'sequence',
    'transp',
    'priority',
    'organizer',
    'attendee',
    'url',
    'comment',
    'contact',
    'geo',
    'resources',
    'attach',
    'related-to',
    'request-status',
    'color',
    'conference',
    'image',
  ]),
  vtimezone: new Set(['tzid', 'last-modified', 'tzurl']),
  standard: new Set(['dtstart', 'tzoffsetfrom', 'tzoffsetto', 'tzname', 'rrule', 'rdate', 'comment']),
  daylight: new Set(['dtstart', 'tzoffsetfrom', 'tzoffsetto', 'tzname', 'rrule', 'rdate', 'comment']),
  valarm: new Set([
    'action',
    'trigger',
    'duration',
    'repeat',
    'description',
    'summary',
    'attendee',
    'attach',
    'uid',
    'acknowledged',
    'related-to',
  ]),
};
/** The components each may hold. */
const CHILDREN: Record<string, ReadonlySet<string>> = {
  vcalendar: new Set(['vevent', 'vtimezone']),
  vevent: new Set(['valarm']),
  vtimezone: new Set(['standard', 'daylight']),
  standard: new Set(),
  daylight: new Set(),
  valarm: new Set(),
};

/** `VEVENT "uid" ("summary")`, naming a component for an error. */
function describeComponent(component: ICAL.Component): string {
  const uid = component.getFirstPropertyValue('uid');
  const summary = component.getFirstPropertyValue('summary');
  const tzid = component.getFirstPropertyValue('tzid');
  return [
    component.name.toUpperCase(),
    ...(uid !== null ? [`UID ${JSON.stringify(String(uid))}`] : []),
    ...(summary !== null ? [`(${JSON.stringify(String(summary))})`] : []),
    ...(tzid !== null ? [`TZID ${JSON.stringify(String(tzid))}`] : []),
  ].join(' ');
}

/**
 * Refuses what sluice would otherwise skip: a component or property it neither reads nor may
 * ignore (a VTODO, VJOURNAL or VFREEBUSY, EXRULE, an RDATE of periods, a RANGE), naming it.
 */
function checkUnderstood(component: ICAL.Component, parent?: ICAL.Component): void {
  const what = describeComponent(component);
  const where = parent && parent.name !== 'vcalendar' ? ` in ${describeComponent(parent)}` : '';
  const properties = UNDERSTOOD[component.name];
  if (!properties)
    throw new CalendarError(
      `has a ${what} component${where}: sluice reads only VEVENTs (with VALARMs) and VTIMEZONEs, and refuses what it would ignore`,
    );
  for (const property of component.getAllProperties()) {
    const name = property.name;
    if (name.startsWith('x-') && name !== 'x-wr-timezone') continue;
    if (!properties.has(name))
      throw new CalendarError(
        `${what}${where}: property ${name.toUpperCase()} is not read by sluice; refused rather than ignored`,
      );
  }
  if (component.name === 'vevent') checkEventProperties(component, what);
  const children = CHILDREN[component.name]!;
  for (const child of component.getAllSubcomponents()) {
    if (!children.has(child.name) && UNDERSTOOD[child.name])
      throw new CalendarError(`${what}: a ${child.name.toUpperCase()} does not belong in it`);
    checkUnderstood(child, component);
  }
}

/** The recurrence forms ical.js expands as RFC 5545 says; others are refused. */
function checkEventProperties(event: ICAL.Component, what: string): void {
  const instance = event.hasProperty('recurrence-id');
  if (event.getAllProperties('rrule').length > 1)
    throw new CalendarError(`${what} has more than one RRULE; give each rule its own event`);
  if (instance) {
    const range = event.getFirstProperty('recurrence-id')!.getParameter('range');
    if (range !== undefined && range !== null)
      throw new CalendarError(
        `${what}: RECURRENCE-ID;RANGE=${String(range)} is not supported; give the changed occurrences as events of their own`,
      );
    for (const name of ['rrule', 'rdate', 'exdate'])
      if (event.hasProperty(name))
        throw new CalendarError(`${what}: an instance (RECURRENCE-ID) cannot have an ${name.toUpperCase()}`);
  }
  const start = event.getFirstProperty('dtstart');
  const startType = start?.type;
  const startZone = start?.getParameter('tzid');
  for (const name of ['rdate', 'exdate'])
    for (const property of event.getAllProperties(name)) {
      if (property.type === 'period')
        throw new CalendarError(
          `${what}: ${name.toUpperCase()};VALUE=PERIOD is not supported; give each period its own event`,
        );
      if (
        startType !== undefined &&
        (property.type !== startType || property.getParameter('tzid') !== startZone)
      )
        throw new CalendarError(
          `${what}: ${name.toUpperCase()} must be of the same type and TZID as DTSTART (${String(startType).toUpperCase()}${typeof startZone === 'string' ? `, ${startZone}` : ''}) to be matched as RFC 5545 says`,
        );
      if (name === 'rdate' && start)
        for (const value of property.getValues() as ICAL.Time[])
          if (value.compare(start.getFirstValue() as ICAL.Time) < 0)
            throw new CalendarError(`${what}: RDATE ${value.toString()} is before its DTSTART`);
    }
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
    // RFC 5545 counts occurrences from 1; ical.js reads COUNT=0 as no count at all (forever).
    if (recur.count !== null && recur.count !== undefined && recur.count < 1)
      throw new CalendarError(`${what}: RRULE COUNT=${recur.count} is not a number of occurrences`);
    if (REFUSED_FREQUENCIES.has(recur.freq))
      throw new CalendarError(`${what}: RRULE FREQ=${recur.freq} is refused; events may recur at most daily`);
  }
  occurrencesOf(event, calendar, timeZone, CHECKED_UNTIL, CHECKED_UNTIL);
  checkInstancesMatch(event);
}

/**
 * Each instance (RECURRENCE-ID) given with its master must replace one of its occurrences: ical.js
 * would drop one that does not (or any of a master that does not recur), and so would close nothing.
 */
function checkInstancesMatch(event: ICAL.Event): void {
  const instances = Object.values(event.exceptions);
  if (instances.length === 0) return;
  if (!event.isRecurring())
    throw new CalendarError(
      `${describeComponent(instances[0]!.component)} is an instance of an event that does not recur`,
    );
  const matched = new Set<ICAL.Event>();
  const iterator = event.iterator();
  for (let step = 0; step < MAX_OCCURRENCE_STEPS && matched.size < instances.length; step++) {
    const next = iterator.next();
    if (!next || next.toUnixTime() * 1000 >= CHECKED_UNTIL) break;
    const item = event.getOccurrenceDetails(next).item;
    if (item !== event) matched.add(item);
  }
  const unmatched = instances.find((instance) => !matched.has(instance));
  if (unmatched)
    throw new CalendarError(
      `${describeComponent(unmatched.component)}: RECURRENCE-ID ${unmatched.recurrenceId.toString()} is not an occurrence of its master; give it as an event of its own (another UID)`,
    );
}

/** Whether `event` has an occurrence that is not cancelled, between 1970 and CHECKED_UNTIL. */
function occurs(event: ICAL.Event, calendar: ParsedCalendar, timeZone: string): boolean {
  return occurrencesOf(event, calendar, timeZone, 0, CHECKED_UNTIL).length > 0;
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
