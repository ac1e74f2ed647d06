// Holiday sets in the config: checked against date-holidays' data at parse, an error naming the
// gate and the field; the defaults (public holidays, the region's own time zone).
import Holidays from 'date-holidays';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../functions/core/config/index.ts';
import { HOLIDAY_TYPES } from '../../../functions/core/config/holiday-sets.ts';

const gate = (holidays: unknown) => ({ gates: [{ name: 'bavaria', default: 'open', holidays }] });
const errorOf = (input: unknown): string => {
  try {
    parseConfig(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('parsed without error');
};

describe('holiday sets', () => {
  it('default to public holidays in the time zone the library gives the region', () => {
    expect(parseConfig(gate({ country: 'DE', region: 'BY' })).gates[0]!.holidays).toEqual({
      country: 'DE',
      region: 'BY',
      types: ['public'],
      timeZone: 'Europe/Berlin',
    });
    // A state with a zone of its own: California's, not the country's first (New York).
    expect(parseConfig(gate({ country: 'US', region: 'CA' })).gates[0]!.holidays!.timeZone).toBe(
      'America/Los_Angeles',
    );
    expect(
      parseConfig(gate({ country: 'AU', types: ['public', 'bank', 'public'], timeZone: 'Australia/Perth' }))
        .gates[0]!.holidays,
    ).toEqual({ country: 'AU', types: ['public', 'bank'], timeZone: 'Australia/Perth' });
  });

  it.each([
    [{ country: 'XX' }, /gates\[bavaria\]\.holidays\.country: "XX" is not a country date-holidays knows/],
    [{ country: 'de' }, /holidays\.country: "de" is not a country .*\(did you mean "DE"\?\)/],
    [{ country: 'DE', region: 'ZZ' }, /gates\[bavaria\]\.holidays\.region: "ZZ" is not a region of DE .*BY/],
    [
      { country: 'DE', types: ['holy'] },
      /gates\[bavaria\]\.holidays\.types\[0\]: "holy" is not a holiday type/,
    ],
    [{ country: 'DE', types: [] }, /gates\[bavaria\]\.holidays\.types: name at least one type/],
    [
      { country: 'DE', timeZone: 'Europe/Munich' },
      /holidays\.timeZone: "Europe\/Munich" is not an IANA time zone/,
    ],
    [{ country: 'DE', state: 'BY' }, /gates\[bavaria\]\.holidays: unknown field "state"/],
    [{ region: 'BY' }, /gates\[bavaria\]\.holidays\.country/],
  ])('refuse %j, naming the gate and the field', (holidays, message) => {
    expect(errorOf(gate(holidays))).toMatch(message);
  });

  it('name every type the library gives a holiday, in every country', () => {
    const library = new Holidays();
    const seen = new Set<string>();
    for (const country of Object.keys(library.getCountries())) {
      library.init(country);
      for (const holiday of library.getHolidays(2026)) seen.add(holiday.type);
    }
    expect([...seen].sort()).toEqual([...HOLIDAY_TYPES].sort());
  });
});
