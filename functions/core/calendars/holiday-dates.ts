// The dates of a holiday set, as date-holidays computes them: loaded on first use (a chunk of its
// own in the Lambda bundles), only for a gate that has `holidays`.
import Holidays from 'date-holidays';
import type { GateHolidays } from '../config/index.ts';
import { holidayDataVersion } from '../config/holiday-sets.ts';

/**
 * The date-holidays version package.json pins. Written out, not imported from its package.json:
 * a JSON import needs an import attribute the compiled CLI's bundler drops for Node 20 (a test
 * checks it against the installed package).
 */
export const DATE_HOLIDAYS_VERSION = '3.37.0';

/** `date-holidays 3.37.0, data 2026-09-20`: where a gate's holiday dates come from. */
export const HOLIDAY_LIBRARY = `date-holidays ${DATE_HOLIDAYS_VERSION}, data ${holidayDataVersion()}`;

/** One holiday: the library's own start and end (local midnight to the next, in the set's time zone). */
export interface HolidayDate {
  readonly name: string;
  /** The library's local date, `YYYY-MM-DD`. */
  readonly date: string;
  readonly type: string;
  /** ms since the epoch */
  readonly start: number;
  readonly end: number;
}

/** Computed years, by set and year: a year takes the library some 10 ms, and a warm function asks again and again. */
const computed = new Map<string, HolidayDate[]>();
const MAX_COMPUTED = 256;

/** The holidays of `set` in the given calendar years, in date-holidays' order. */
export function holidayDates(set: GateHolidays, years: readonly number[]): HolidayDate[] {
  return years.flatMap((year) => {
    const key = JSON.stringify([set.country, set.region, set.types, set.timeZone, year]);
    let dates = computed.get(key);
    if (!dates) {
      dates = yearOf(set, year);
      if (computed.size >= MAX_COMPUTED) computed.delete(computed.keys().next().value!);
      computed.set(key, dates);
    }
    return dates;
  });
}

function yearOf(set: GateHolidays, year: number): HolidayDate[] {
  const library = new Holidays(set.country, set.region ?? '', '', {
    types: [...set.types],
    timezone: set.timeZone,
  });
  return library.getHolidays(year).map((holiday) => ({
    name: holiday.name,
    date: holiday.date.slice(0, 10),
    type: holiday.type,
    start: holiday.start.getTime(),
    end: holiday.end.getTime(),
  }));
}
