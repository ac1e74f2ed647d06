// A gate's holiday set (`holidays: { country: DE, region: BY, types: [public] }`): checked against
// the data of date-holidays, the library that computes the dates (functions/core/calendars/holidays.ts).
// Only the data is imported here (not the library's date code), so the config schema stays light.
import { data } from 'date-holidays/data';
import * as z from 'zod';
import { timeZoneProblem } from './cron.ts';
import { checked, listing, strict } from './fields.ts';
import { closest } from './issues.ts';
import type { GateHolidays } from './types.ts';

/** The holiday types date-holidays knows (its parser's TYPES), most binding first. */
export const HOLIDAY_TYPES = ['public', 'bank', 'school', 'optional', 'observance'] as const;
export type HolidayType = (typeof HOLIDAY_TYPES)[number];

interface RegionData {
  readonly name?: string;
  readonly zones?: readonly string[];
  readonly regions?: Readonly<Record<string, unknown>>;
}
interface CountryData extends RegionData {
  readonly states?: Readonly<Record<string, RegionData>>;
}
// Read inside functions only: a bundle that never checks a holiday set leaves the data out.
const countries = (): Record<string, CountryData> =>
  (data as unknown as { holidays: Record<string, CountryData> }).holidays;

/** The version of date-holidays' data (a date, e.g. `2026-09-20`), shown by `sluice gates`. */
export const holidayDataVersion = (): string => (data as unknown as { version: string }).version;

const own = <T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined =>
  record && Object.hasOwn(record, key) ? record[key] : undefined;

function countryProblem(country: string): string | undefined {
  if (own(countries(), country)) return undefined;
  const near = closest(country.toUpperCase(), Object.keys(countries()));
  return `"${country}" is not a country date-holidays knows: give its ISO 3166-1 alpha-2 code in capitals (e.g. DE, US)${near ? ` (did you mean "${near}"?)` : ''}`;
}

/** The problem with `region` in `country`, or undefined when the library knows it. */
function regionProblem(country: string, region: string): string | undefined {
  const states = own(countries(), country)?.states;
  if (own(states, region)) return undefined;
  const known = Object.keys(states ?? {});
  return known.length === 0
    ? `"${region}": date-holidays knows no regions of ${country}; remove region`
    : `"${region}" is not a region of ${country} date-holidays knows: one of ${listing(known)}`;
}

/** The time zone a holiday set is read in when none is given: the library's first for the region, else the country. */
export function defaultHolidayTimeZone(country: string, region?: string): string {
  const entry = own(countries(), country);
  const zones = (region !== undefined && own(entry?.states, region)?.zones) || entry?.zones;
  return zones?.[0] ?? 'UTC';
}

export const holidaySetSchema = strict({
  country: z.string(),
  region: z.string().optional(),
  types: z
    .array(
      z.string().refine((type) => (HOLIDAY_TYPES as readonly string[]).includes(type), {
        error: (issue) =>
          `"${String(issue.input)}" is not a holiday type date-holidays knows: one of ${listing([...HOLIDAY_TYPES])}`,
      }),
    )
    .min(1, `name at least one type (${listing([...HOLIDAY_TYPES])}), or leave types out for public`)
    .optional(),
  timeZone: checked(timeZoneProblem).optional(),
})
  .superRefine((set, ctx) => {
    const problem = countryProblem(set.country);
    if (problem) {
      ctx.addIssue({ code: 'custom', path: ['country'], message: problem });
      return;
    }
    if (set.region === undefined) return;
    const regional = regionProblem(set.country, set.region);
    if (regional) ctx.addIssue({ code: 'custom', path: ['region'], message: regional });
  })
  .transform((set): GateHolidays => ({
    country: set.country,
    ...(set.region !== undefined && { region: set.region }),
    types: [...new Set((set.types ?? ['public']) as HolidayType[])],
    timeZone: set.timeZone ?? defaultHolidayTimeZone(set.country, set.region),
  }));
