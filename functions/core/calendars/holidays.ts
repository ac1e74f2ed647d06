import type { Gate, GateHolidays } from '../config/index.ts';
import { zoneOffsetMs } from '../config/zoned-time.ts';
import { CALENDAR_SPAN_MS } from './calendars.ts';
import type { ClosedPeriod } from './closed-periods.ts';

/**
 * A gate's holidays around `at` (CALENDAR_SPAN_MS either side, as calendar events) as closed
 * periods, each from the library's start to its end. date-holidays is loaded on first use, only
 * for a gate that has `holidays`. A set the library cannot compute (a spec edited by hand) closes
 * the gate for good, and says why.
 */
export async function holidayPeriods(gate: Gate, at: Date): Promise<ClosedPeriod[]> {
  const set = gate.holidays;
  if (!set) return [];
  const from = at.getTime() - CALENDAR_SPAN_MS;
  const to = at.getTime() + CALENDAR_SPAN_MS;
  const name = holidaySetName(set);
  try {
    const { holidayDates } = await import('./holiday-dates.ts');
    const years = yearsBetween(from, to, set.timeZone);
    return holidayDates(set, years)
      .filter((holiday) => holiday.end > from && holiday.start < to)
      .map((holiday) => ({
        start: holiday.start,
        end: holiday.end,
        cause: 'calendar',
        reason: `holiday ${JSON.stringify(holiday.name)} (${name} ${holiday.type}, ${holiday.date}, ${set.timeZone})`,
      }));
  } catch (error) {
    return [
      {
        start: 0,
        end: Infinity,
        cause: 'calendar',
        reason: `holidays ${name} cannot be evaluated (${(error as Error).message}); the gate counts as closed until its spec is fixed`,
      },
    ];
  }
}

/** The local calendar years from `from` to `to` in `timeZone`. */
function yearsBetween(from: number, to: number, timeZone: string): number[] {
  const yearAt = (instant: number) => new Date(instant + zoneOffsetMs(timeZone, instant)).getUTCFullYear();
  const years: number[] = [];
  for (let year = yearAt(from); year <= yearAt(to); year++) years.push(year);
  return years;
}

/** `DE-BY` or `US`: how a holiday set is named in messages. */
export const holidaySetName = (set: Pick<GateHolidays, 'country' | 'region'>): string =>
  set.region === undefined ? set.country : `${set.country}-${set.region}`;

/** A holiday set as `sluice gates` shows it. */
export interface HolidaySetReport {
  /** `DE-BY` */
  readonly set: string;
  readonly types: readonly string[];
  readonly timeZone: string;
  /** date-holidays' package version and its data's (`3.37.0, data 2026-09-20`). */
  readonly library: string;
}

/** The set, with the library's versions (loaded on first use, as the dates are). */
export async function holidaySetReport(set: GateHolidays): Promise<HolidaySetReport> {
  const { HOLIDAY_LIBRARY } = await import('./holiday-dates.ts');
  return { set: holidaySetName(set), types: set.types, timeZone: set.timeZone, library: HOLIDAY_LIBRARY };
}
