// Property tests of the clock edges across the DST changes of twelve zones (both hemispheres,
// half- and quarter-hour offsets, changes at midnight), 2026-2030, against an oracle that only
// reads wall clocks (Intl), minute by minute:
// - a freeze ending in a repeated hour lasts until the wall clock last shows its end;
// - a schedule window in whole days ends when the wall clock last shows the firing's time that
//   many days later (25 hours across clocks going back), one in hours lasts exactly that long;
// - a schedule naming a skipped local time is reported (and parseCron does not fire it, as
//   Scheduler does not); one naming a time that exists is not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { skippedTimes } from '../../../functions/core/config/cron.ts';
import { parseCron } from '../../../functions/core/config/cron.ts';
import { parseGate } from '../../../functions/core/config/index.ts';
import { freezePeriods } from '../../../functions/core/calendars/freezes.ts';
import { scheduledRequest } from '../../../functions/core/gates/state.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Sydney',
  'Australia/Lord_Howe', // a 30-minute change
  'Asia/Kolkata', // +05:30, no DST
  'America/St_Johns', // -03:30 / -02:30
  'Pacific/Chatham', // +12:45 / +13:45
  'America/Santiago', // changes at midnight
  'Europe/London',
  'Africa/Cairo', // changes at midnight, Thursday/Friday
  'Asia/Tehran', // +03:30, no DST since 2022
  'Pacific/Auckland',
] as const;
const YEARS = [2026, 2027, 2028, 2029, 2030];

const formats = new Map<string, Intl.DateTimeFormat>();
/** `2026-10-25T02:30`: the wall clock in `timeZone` at `instant` (to the minute). */
function wallKey(timeZone: string, instant: number): string {
  let format = formats.get(timeZone);
  if (!format)
    formats.set(
      timeZone,
      (format = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
      })),
    );
  const p = Object.fromEntries(
    format.formatToParts(new Date(instant)).map((part) => [part.type, part.value]),
  );
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}
/** The wall clock as if it were UTC, ms. */
const keyMs = (key: string) => Date.parse(`${key}:00Z`);
const offsetAt = (timeZone: string, instant: number) => keyMs(wallKey(timeZone, instant)) - instant;

interface Change {
  readonly timeZone: string;
  /** The first instant at the new offset. */
  readonly at: number;
  readonly before: number;
  readonly after: number;
}
/** Every change of offset in the zone in the years, found by reading its wall clock. */
function changesOf(timeZone: string): Change[] {
  const found: Change[] = [];
  for (const year of YEARS)
    for (let day = Date.UTC(year, 0, 1); day < Date.UTC(year + 1, 0, 1); day += DAY) {
      let [low, high] = [day, day + DAY];
      const [before, after] = [offsetAt(timeZone, low), offsetAt(timeZone, high)];
      if (before === after) continue;
      while (high - low > MINUTE) {
        const middle = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
        if (offsetAt(timeZone, middle) === before) low = middle;
        else high = middle;
      }
      found.push({ timeZone, at: high, before, after });
    }
  return found;
}
const CHANGES = ZONES.flatMap(changesOf);
const BACK = CHANGES.filter((change) => change.after < change.before);
const FORWARD = CHANGES.filter((change) => change.after > change.before);

/** The instants within `span` of `around` whose wall clock reads `key`, to the minute. */
function instantsShowing(timeZone: string, key: string, around: number, span = 3 * HOUR): number[] {
  const found: number[] = [];
  for (let t = around - span; t <= around + span; t += MINUTE)
    if (wallKey(timeZone, t) === key) found.push(t);
  return found;
}
/** The instant a wall time stands for as an end: the last showing it; in a gap, the offset before it. */
function endOracle(timeZone: string, key: string, around: number): number {
  const showing = instantsShowing(timeZone, key, around);
  if (showing.length > 0) return Math.max(...showing);
  return keyMs(key) - offsetAt(timeZone, keyMs(key) - DAY);
}
const addDays = (key: string, days: number) => new Date(keyMs(key) + days * DAY).toISOString().slice(0, 16);

const runs = (numRuns: number) => ({ numRuns, seed: 20261025 });

describe('clock edges across DST changes', () => {
  it('finds changes both ways in both hemispheres, and none in Kolkata or Tehran', () => {
    const zonesChanging = new Set(CHANGES.map((change) => change.timeZone));
    expect(zonesChanging.size).toBe(10);
    expect(zonesChanging.has('Asia/Kolkata') || zonesChanging.has('Asia/Tehran')).toBe(false);
    expect(BACK.length).toBeGreaterThanOrEqual(45);
    expect(FORWARD.length).toBeGreaterThanOrEqual(45);
  });

  it('a freeze ending near a change lasts until the wall clock last shows its end', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BACK, ...FORWARD),
        fc.integer({ min: -150, max: 150 }),
        ({ timeZone, at }, minutes) => {
          const to = wallKey(timeZone, at + minutes * MINUTE);
          const from = addDays(to, -1).slice(0, 10);
          const [period] = freezePeriods(
            parseGate({ name: 'f', default: 'open', freezes: [{ from, to, timeZone }] }),
          );
          expect(period!.end).toBe(endOracle(timeZone, to, at));
          expect(period!.start).toBe(
            Math.min(
              ...instantsShowing(
                timeZone,
                `${from}T00:00`,
                keyMs(`${from}T00:00`) - offsetAt(timeZone, at - DAY),
              ),
            ),
          );
        },
      ),
      runs(120),
    );
  });

  it('a freeze ending in a repeated hour covers its second pass: it lasts its true length', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BACK), fc.nat(), ({ timeZone, at, before, after }, pick) => {
        const repeated = (before - after) / MINUTE;
        const to = wallKey(timeZone, at + (pick % repeated) * MINUTE); // a wall time shown twice
        const [first, second] = instantsShowing(timeZone, to, at);
        expect(second! - first!).toBe(before - after);
        const [period] = freezePeriods(
          parseGate({ name: 'f', default: 'open', freezes: [{ from: addDays(to, -1), to, timeZone }] }),
        );
        expect(period!.end).toBe(second);
        expect(period!.end - period!.start).toBe(DAY + (before - after));
      }),
      runs(100),
    );
  });

  it('a schedule window in days ends when the wall clock last shows the same time that many days on; in hours, exactly then', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BACK, ...FORWARD),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: -3 * 24 * 60, max: 0 }),
        ({ timeZone, at }, days, minutesBefore) => {
          // A daily schedule at the wall time of an instant up to three days before the change.
          const key = wallKey(timeZone, at + minutesBefore * MINUTE);
          const [hour, minute] = key.slice(11).split(':').map(Number);
          const cron = `${minute} ${hour} * * ? *`;
          const gate = parseGate({
            name: 'w',
            default: 'open',
            schedules: [
              { cron, timeZone, action: 'close', window: `${days}d` },
              { cron, timeZone, action: 'close', window: `${days * 24}h` },
            ],
          });
          const fired = parseCron(cron, timeZone).next(new Date(at + minutesBefore * MINUTE - MINUTE));
          if (!fired) return;
          const firedKey = wallKey(timeZone, fired.getTime());
          const end = endOracle(timeZone, addDays(firedKey, days), fired.getTime() + days * DAY);
          expect(scheduledRequest(gate, 0, fired).windowMs).toBe(end - fired.getTime());
          expect(scheduledRequest(gate, 1, fired).windowMs).toBe(days * DAY);
        },
      ),
      runs(150),
    );
  });

  it('a schedule naming a skipped local time is reported and does not fire then; a time that exists is not reported', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FORWARD),
        fc.nat(),
        fc.boolean(),
        ({ timeZone, at, before, after }, pick, daily) => {
          const gapMinutes = (after - before) / MINUTE;
          const skipped = new Date(at + before + (pick % gapMinutes) * MINUTE).toISOString().slice(0, 16); // wall time never shown
          expect(instantsShowing(timeZone, skipped, at)).toEqual([]);
          const [date, time] = skipped.split('T');
          const [year, month, day] = date!.split('-').map(Number);
          const [hour, minute] = time!.split(':').map(Number);
          const cron = daily ? `${minute} ${hour} * * ? *` : `${minute} ${hour} ${day} ${month} ? ${year}`;
          const window = [new Date(at - DAY), new Date(at + DAY)] as const;
          expect(skippedTimes(cron, timeZone, ...window)).toEqual([skipped]);
          if (!daily) expect(parseCron(cron, timeZone).next(window[0])).toBeUndefined();
          // The minute before the gap and its end both exist: nothing to report.
          for (const shown of [wallKey(timeZone, at - MINUTE), wallKey(timeZone, at)]) {
            const [h, m] = shown.slice(11).split(':').map(Number);
            expect(skippedTimes(`${m} ${h} * * ? *`, timeZone, ...window)).toEqual([]);
          }
        },
      ),
      runs(150),
    );
  });

  it('reports nothing in zones without changes, whatever the time', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Asia/Kolkata', 'Asia/Tehran'),
        fc.integer({ min: 0, max: 23 }),
        fc.constantFrom(0, 15, 30, 45),
        (timeZone, hour, minute) => {
          expect(
            skippedTimes(
              `${minute} ${hour} * * ? *`,
              timeZone,
              new Date('2026-01-01T00:00:00Z'),
              new Date('2028-01-01T00:00:00Z'),
            ),
          ).toEqual([]);
        },
      ),
      runs(20),
    );
  });
});
