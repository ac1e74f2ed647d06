// Property tests of closed periods (fast-check): dated freezes and iCalendar events (a daily RRULE
// in a TZID, across the clock change) around the DST changes of Europe/Berlin and
// America/New_York, against an oracle that reads wall clocks with Intl 15 minutes at a time. The
// gate is closed while a period covers the instant, whatever the requests say; otherwise the
// request in effect decides (an open request made before a period started no longer does once it
// has), else the default; and the next change is the next change.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGate, type Gate } from '../../../functions/core/config/index.ts';
import { calendarPeriods } from '../../../functions/core/calendars/calendars.ts';
import type { ClosedPeriod } from '../../../functions/core/calendars/closed-periods.ts';
import { freezePeriods } from '../../../functions/core/calendars/freezes.ts';
import { gateStateAt, nextChange } from '../../../functions/core/gates/state.ts';
import type { GateRequest } from '../../../functions/core/store/gates.ts';

const STEP = 15 * 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The clock changes of 2026 (UTC instants), where wall-clock times vanish or repeat. */
const CHANGES: readonly { timeZone: string; change: number }[] = [
  { timeZone: 'Europe/Berlin', change: Date.parse('2026-03-29T01:00:00Z') },
  { timeZone: 'Europe/Berlin', change: Date.parse('2026-10-25T01:00:00Z') },
  { timeZone: 'America/New_York', change: Date.parse('2026-03-08T07:00:00Z') },
  { timeZone: 'America/New_York', change: Date.parse('2026-11-01T06:00:00Z') },
];

// --- The oracle: wall clocks read with Intl, written without the code under test. ---

const formats = new Map<string, Intl.DateTimeFormat>();
function wallKey(timeZone: string, at: number): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/**
 * The instant a local time (on the 15-minute grid) stands for, by RFC 5545's rule: its first
 * occurrence; one skipped by a gap is read with the offset in force before the gap.
 */
function oracleInstant(timeZone: string, local: string): number {
  const asUtc = Date.parse(`${local}:00Z`);
  for (let t = asUtc - 15 * HOUR; t <= asUtc + 15 * HOUR; t += STEP)
    if (wallKey(timeZone, t) === local) return t;
  // Skipped: the first instant past it is the gap's end; the offset before it is that of 15 minutes earlier.
  let end = asUtc - 15 * HOUR;
  while (wallKey(timeZone, end) < local) end += STEP;
  const offsetBefore = Date.parse(`${wallKey(timeZone, end - STEP)}:00Z`) - (end - STEP);
  return asUtc - offsetBefore;
}

/** The wall-clock `YYYY-MM-DDTHH:MM` of an instant moved `minutes` along the wall clock (not along time). */
const wallPlus = (local: string, minutes: number): string =>
  new Date(Date.parse(`${local}:00Z`) + minutes * 60_000).toISOString().slice(0, 16);

interface Shape {
  readonly timeZone: string;
  readonly default: 'open' | 'closed';
  /** Local start and length (wall-clock minutes) of a dated freeze. */
  readonly freeze?: { readonly from: string; readonly minutes: number };
  /** Local start and length of an event recurring daily three times. */
  readonly event?: { readonly from: string; readonly minutes: number };
  readonly request?: { readonly action: 'open' | 'close'; readonly agoMs: number; readonly windowMs: number };
}

const localAround = (timeZone: string, change: number): fc.Arbitrary<string> =>
  fc
    .integer({ min: -8, max: 8 })
    .map((quarters) => wallKey(timeZone, change + quarters * STEP))
    // Days before too: a daily event crosses the change on a later day.
    .chain((local) => fc.constantFrom(local, wallPlus(local, -24 * 60), wallPlus(local, -48 * 60)));

const shapeAndInstant: fc.Arbitrary<[Shape, Date]> = fc
  .constantFrom(...CHANGES)
  .chain(({ timeZone, change }) =>
    fc.tuple(
      fc.record(
        {
          timeZone: fc.constant(timeZone),
          default: fc.constantFrom('open' as const, 'closed' as const),
          freeze: fc.record({
            from: localAround(timeZone, change),
            minutes: fc.integer({ min: 1, max: 16 }).map((q) => q * 15),
          }),
          event: fc.record({
            from: localAround(timeZone, change),
            minutes: fc.integer({ min: 1, max: 16 }).map((q) => q * 15),
          }),
          request: fc.record({
            action: fc.constantFrom('open' as const, 'close' as const),
            agoMs: fc.integer({ min: 0, max: 3 * DAY }),
            windowMs: fc.integer({ min: STEP, max: 4 * DAY }),
          }),
        },
        { requiredKeys: ['timeZone', 'default'] },
      ),
      fc.integer({ min: -3 * DAY, max: 12 * HOUR }).map((offset) => new Date(change + offset)),
    ),
  );

function icsOf(shape: Shape): string {
  const compact = (local: string) => `${local.replaceAll('-', '').replace(':', '')}00`;
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//sluice//properties//EN',
    'BEGIN:VEVENT',
    'UID:prop@sluice.test',
    `DTSTART;TZID=${shape.timeZone}:${compact(shape.event!.from)}`,
    `DTEND;TZID=${shape.timeZone}:${compact(wallPlus(shape.event!.from, shape.event!.minutes))}`,
    'RRULE:FREQ=DAILY;COUNT=3',
    'SUMMARY:window',
    'END:VEVENT',
    'END:VCALENDAR',
  ].join('\r\n');
}

function gateOf(shape: Shape): Gate | undefined {
  const freeze = shape.freeze && {
    from: shape.freeze.from,
    to: wallPlus(shape.freeze.from, shape.freeze.minutes),
  };
  // A span whose end, read in the zone, is not after its start (it falls in a gap) is refused by the schema.
  const spans = [
    ...(freeze ? [[freeze.from, freeze.to]] : []),
    ...(shape.event
      ? [0, 1, 2].map((day) => [
          wallPlus(shape.event!.from, day * 1440),
          wallPlus(shape.event!.from, day * 1440 + shape.event!.minutes),
        ])
      : []),
  ];
  if (
    spans.some(([from, to]) => !(oracleInstant(shape.timeZone, to!) > oracleInstant(shape.timeZone, from!)))
  )
    return undefined;
  return parseGate({
    name: 'prop',
    default: shape.default,
    ...(freeze && { freezes: [{ ...freeze, timeZone: shape.timeZone }] }),
    ...(shape.event && { calendars: [{ name: 'c', ics: icsOf(shape), timeZone: 'UTC' }] }),
  });
}

/** The closed spans by the oracle: the freeze, and the event on each of its three days (wall-clock days). */
const spansOf = new WeakMap<Shape, [number, number][]>();
function oracleSpans(shape: Shape): [number, number][] {
  const known = spansOf.get(shape);
  if (known) return known;
  const spans = computeSpans(shape);
  spansOf.set(shape, spans);
  return spans;
}

function computeSpans(shape: Shape): [number, number][] {
  const span = (from: string, minutes: number): [number, number] => [
    oracleInstant(shape.timeZone, from),
    oracleInstant(shape.timeZone, wallPlus(from, minutes)),
  ];
  return [
    ...(shape.freeze ? [span(shape.freeze.from, shape.freeze.minutes)] : []),
    ...(shape.event
      ? [0, 1, 2].map((day) => span(wallPlus(shape.event!.from, day * 1440), shape.event!.minutes))
      : []),
  ];
}

function oracleState(shape: Shape, recorded: GateRequest | undefined, at: number): 'open' | 'closed' {
  const spans = oracleSpans(shape);
  if (spans.some(([start, end]) => start <= at && at < end)) return 'closed';
  if (recorded) {
    const made = Date.parse(recorded.requestedAt);
    // A span's start is a close: an open request made at or before it no longer counts after it.
    const closedSince = spans.some(([start]) => made <= start && start <= at);
    if (made <= at && at < made + recorded.windowMs! && !(recorded.action === 'open' && closedSince))
      return recorded.action === 'open' ? 'open' : 'closed';
  }
  return shape.default;
}

function requestOf(shape: Shape, at: Date): GateRequest | undefined {
  if (!shape.request) return undefined;
  return {
    action: shape.request.action,
    requestedAt: new Date(at.getTime() - shape.request.agoMs).toISOString(),
    requestedBy: 'alice',
    reason: '',
    source: 'cli',
    windowMs: shape.request.windowMs,
  };
}

async function periodsOf(gate: Gate, at: Date): Promise<ClosedPeriod[]> {
  return [...freezePeriods(gate), ...(await calendarPeriods(gate, at))];
}

const runs = (numRuns: number) => ({ numRuns, seed: 20261224 });
const PROPERTY_TIMEOUT_MS = 600_000;

describe('closed periods: properties', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('the state matches the wall-clock oracle across DST changes: closed in a freeze or event whatever the request, else the request, else the default', async () => {
    await fc.assert(
      fc.asyncProperty(shapeAndInstant, async ([shape, at]) => {
        const gate = gateOf(shape);
        fc.pre(gate !== undefined);
        const recorded = requestOf(shape, at);
        const periods = await periodsOf(gate!, at);
        expect(gateStateAt(gate!, recorded, at, periods).state).toBe(
          oracleState(shape, recorded, at.getTime()),
        );
      }),
      runs(300),
    );
  });

  it('an open request never lifts a freeze or a calendar event', async () => {
    await fc.assert(
      fc.asyncProperty(shapeAndInstant, async ([shape, at]) => {
        const gate = gateOf(shape);
        fc.pre(gate !== undefined);
        const covered = oracleSpans(shape).some(
          ([start, end]) => start <= at.getTime() && at.getTime() < end,
        );
        fc.pre(covered);
        const open: GateRequest = {
          action: 'open',
          requestedAt: at.toISOString(),
          requestedBy: 'alice',
          reason: '',
          source: 'cli',
        };
        const periods = await periodsOf(gate!, at);
        expect(gateStateAt(gate!, open, at, periods).state).toBe('closed');
      }),
      runs(100),
    );
  });

  it('the next change is the next change: the state holds until it (sampled every 15 minutes), and is the one named after it', async () => {
    await fc.assert(
      fc.asyncProperty(shapeAndInstant, async ([shape, from]) => {
        const gate = gateOf(shape);
        fc.pre(gate !== undefined);
        const recorded = requestOf(shape, from);
        const periods = await periodsOf(gate!, from);
        const change = nextChange(gate!, recorded, from, undefined, periods);
        const before = oracleState(shape, recorded, from.getTime());
        const end = change ? Date.parse(change.at) : from.getTime() + 6 * DAY;
        if (change) {
          expect(end).toBeGreaterThan(from.getTime());
          expect(change.state).not.toBe(before);
          expect(oracleState(shape, recorded, end)).toBe(change.state);
        }
        for (let t = from.getTime() + STEP - (from.getTime() % STEP); t < end; t += STEP)
          expect(oracleState(shape, recorded, t)).toBe(before);
      }),
      runs(150),
    );
  });
});
