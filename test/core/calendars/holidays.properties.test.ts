// Property tests of holiday sets against date-holidays' own dates (fast-check): for random years
// and countries of both hemispheres (and some of their regions), the gate is closed at an instant
// exactly when the library says a holiday of the set's types covers it, in the set's time zone;
// and every such holiday given as a day runs from local midnight to the next.
import Holidays from 'date-holidays';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGate, type GateHolidays } from '../../../functions/core/config/index.ts';
import { datedPeriodsOf } from '../../../functions/core/gates/conditions.ts';
import { holidayPeriods } from '../../../functions/core/calendars/holidays.ts';
import { gateStateAt } from '../../../functions/core/gates/state.ts';

const SETS: readonly Record<string, string>[] = [
  { country: 'DE', region: 'BY' },
  { country: 'DE' },
  { country: 'US', region: 'CA' },
  { country: 'GB' },
  { country: 'FR' },
  { country: 'JP' },
  { country: 'IN' },
  { country: 'AU', region: 'NSW' },
  { country: 'NZ' },
  { country: 'BR' },
  { country: 'CL' },
  { country: 'ZA' },
  { country: 'AR' },
];
const TYPES = fc.subarray(['public', 'bank', 'observance'] as const, { minLength: 1 });
const ZONE = fc.option(fc.constantFrom('UTC', 'Pacific/Chatham', 'America/St_Johns', 'Asia/Kolkata'), {
  nil: undefined,
});
const runs = (numRuns: number) => ({ numRuns, seed: 20260604 });

/** The library's holidays of `set` in `year` (its own object, asked directly). */
function libraryDates(set: GateHolidays, year: number) {
  return new Holidays(set.country, set.region ?? '', '', { types: [...set.types], timezone: set.timeZone })
    .getHolidays(year)
    .map((holiday) => ({ start: holiday.start.getTime(), end: holiday.end.getTime(), date: holiday.date }));
}

const localMidnight = (timeZone: string, instant: number) =>
  new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
    new Date(instant),
  ) === '00:00';

describe("holiday sets against the library's own dates", () => {
  it('close the gate exactly when a holiday of the set covers the instant', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SETS),
        TYPES,
        ZONE,
        fc.integer({ min: 2020, max: 2040 }),
        fc.integer({ min: 0, max: 365 * 24 * 60 - 1 }),
        async (fields, types, timeZone, year, minute) => {
          const gate = parseGate({
            name: 'holidays',
            default: 'open',
            holidays: { ...fields, types, ...(timeZone && { timeZone }) },
          });
          const set = gate.holidays!;
          const at = Date.UTC(year, 0, 1) + minute * 60_000;
          const library = [year - 1, year, year + 1].flatMap((y) => libraryDates(set, y));
          const covered = library.some((holiday) => holiday.start <= at && at < holiday.end);
          const status = gateStateAt(gate, undefined, new Date(at), await datedPeriodsOf(gate, new Date(at)));
          expect(status.state === 'closed', `${JSON.stringify(set)} at ${new Date(at).toISOString()}`).toBe(
            covered,
          );
          if (covered) expect(status.closedBy?.reason).toMatch(/^holiday "/);
        },
      ),
      runs(150),
    );
  });

  it("give every holiday of the library's year, a whole day's from local midnight to the next", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SETS),
        ZONE,
        fc.integer({ min: 2020, max: 2040 }),
        async (fields, timeZone, year) => {
          const gate = parseGate({
            name: 'holidays',
            default: 'open',
            holidays: { ...fields, ...(timeZone && { timeZone }) },
          });
          const set = gate.holidays!;
          const periods = await holidayPeriods(gate, new Date(Date.UTC(year, 6, 1)));
          const library = libraryDates(set, year);
          for (const holiday of library) {
            expect(
              periods.some((period) => period.start === holiday.start && period.end === holiday.end),
            ).toBe(true);
            if (holiday.date.endsWith(' 00:00:00')) {
              expect(localMidnight(set.timeZone, holiday.start)).toBe(true);
              expect(localMidnight(set.timeZone, holiday.end)).toBe(true);
            }
          }
        },
      ),
      runs(60),
    );
  });
});
