// The dates of a holiday set, as date-holidays computes them: loaded on first use (a chunk of its
// own in the Lambda bundles), only for a gate that has `holidays`.
import Holidays from 'date-holidays';
import type { GateHolidays } from '../config/index.ts';
import { HOLIDAY_DATA_VERSION } from '../config/holiday-sets.ts';
import packageJson from 'date-holidays/package.json' with { type: 'json' };

/** `date-holidays 3.37.0, data 2026-09-20`: where a gate's holiday dates come from. */
export const HOLIDAY_LIBRARY = `date-holidays ${packageJson.version}, data ${HOLIDAY_DATA_VERSION}`;

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

/** The holidays of `set` in the given calendar years, in date-holidays' order. */
export function holidayDates(set: GateHolidays, years: readonly number[]): HolidayDate[] {
  const library = new Holidays(set.country, set.region ?? '', '', {
    types: [...set.types],
    timezone: set.timeZone,
  });
  return years.flatMap((year) =>
    library.getHolidays(year).map((holiday) => ({
      name: holiday.name,
      date: holiday.date.slice(0, 10),
      type: holiday.type,
      start: holiday.start.getTime(),
      end: holiday.end.getTime(),
    })),
  );
}
