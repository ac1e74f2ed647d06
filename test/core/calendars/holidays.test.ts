// Holiday sets close a gate on known dates, from local midnight to the next in the set's time
// zone, whatever its requests say (plain values; the library is the real one).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { parseGate } from '../../../functions/core/config/index.ts';
import { datedPeriodsOf } from '../../../functions/core/gates/conditions.ts';
import { DATE_HOLIDAYS_VERSION, HOLIDAY_LIBRARY } from '../../../functions/core/calendars/holiday-dates.ts';
import { holidayPeriods } from '../../../functions/core/calendars/holidays.ts';
import { gateStateAt, nextChange } from '../../../functions/core/gates/state.ts';

const gateWith = (holidays: Record<string, unknown>) =>
  parseGate({ name: 'holidays', default: 'open', holidays });

/** The holiday named `date` of the gate's set, as its closed period (ISO instants). */
async function holidayOn(holidays: Record<string, unknown>, date: string) {
  const gate = gateWith(holidays);
  const periods = await holidayPeriods(gate, new Date(`${date}T12:00:00Z`));
  const found = periods.filter((period) => period.reason.includes(`, ${date}, `));
  expect(found, `${JSON.stringify(holidays)} on ${date}`).toHaveLength(1);
  return {
    start: new Date(found[0]!.start).toISOString(),
    end: new Date(found[0]!.end).toISOString(),
    reason: found[0]!.reason,
  };
}

describe('holiday sets on known dates', () => {
  it.each([
    // Corpus Christi is a public holiday in Bavaria, not in Berlin; CEST (+2).
    [
      { country: 'DE', region: 'BY' },
      '2026-06-04',
      '2026-06-03T22:00:00.000Z',
      '2026-06-04T22:00:00.000Z',
      'Fronleichnam',
    ],
    // Thanksgiving, the fourth Thursday of November; EST (-5).
    [
      { country: 'US' },
      '2026-11-26',
      '2026-11-26T05:00:00.000Z',
      '2026-11-27T05:00:00.000Z',
      'Thanksgiving Day',
    ],
    // Southern hemisphere, in summer time (AEDT +11): Australia Day.
    [
      { country: 'AU', region: 'NSW' },
      '2026-01-26',
      '2026-01-25T13:00:00.000Z',
      '2026-01-26T13:00:00.000Z',
      'Australia Day',
    ],
    // The gate's own time zone, not the country's: New Zealand's Waitangi Day read in UTC.
    [
      { country: 'NZ', timeZone: 'UTC' },
      '2026-02-06',
      '2026-02-06T00:00:00.000Z',
      '2026-02-07T00:00:00.000Z',
      'Waitangi Day',
    ],
    // A half-hour zone (IST +5:30): Republic Day.
    [{ country: 'IN' }, '2026-01-26', '2026-01-25T18:30:00.000Z', '2026-01-26T18:30:00.000Z', 'Republic Day'],
  ])('%j closes the gate on %s from local midnight to the next', async (holidays, date, start, end, name) => {
    const period = await holidayOn(holidays, date);
    expect(period).toMatchObject({ start, end });
    expect(period.reason).toContain(JSON.stringify(name));
  });

  it('leaves out holidays of another region and of types not named', async () => {
    const berlin = await holidayPeriods(
      gateWith({ country: 'DE', region: 'BE' }),
      new Date('2026-06-04T12:00:00Z'),
    );
    expect(berlin.some((period) => period.reason.includes('2026-06-04'))).toBe(false);
    const publicOnly = await holidayPeriods(gateWith({ country: 'US' }), new Date('2026-02-14T12:00:00Z'));
    expect(publicOnly.some((period) => period.reason.includes('Valentine'))).toBe(false);
    const observances = await holidayPeriods(
      gateWith({ country: 'US', types: ['observance'] }),
      new Date('2026-02-14T12:00:00Z'),
    );
    expect(observances.some((period) => period.reason.includes('Valentine'))).toBe(true);
  });

  it('holds the gate closed on the holiday whatever its requests say, and says when it opens', async () => {
    const gate = gateWith({ country: 'DE', region: 'BY' });
    const at = new Date('2026-06-04T09:00:00Z');
    const periods = await datedPeriodsOf(gate, at);
    const open = {
      action: 'open' as const,
      requestedAt: '2026-06-04T08:00:00.000Z',
      requestedBy: 'alice',
      reason: 'ship it',
      source: 'cli' as const,
    };
    const status = gateStateAt(gate, open, at, periods);
    expect(status).toMatchObject({
      state: 'closed',
      until: '2026-06-04T22:00:00.000Z',
      closedBy: {
        cause: 'calendar',
        reason: 'holiday "Fronleichnam" (DE-BY public, 2026-06-04, Europe/Berlin)',
      },
    });
    const before = new Date('2026-06-03T12:00:00Z');
    expect(gateStateAt(gate, undefined, before, await datedPeriodsOf(gate, before)).state).toBe('open');
    expect(nextChange(gate, undefined, before, undefined, await datedPeriodsOf(gate, before))).toMatchObject({
      at: '2026-06-03T22:00:00.000Z',
      state: 'closed',
      cause: 'calendar',
    });
  });
});

describe('the holiday library named', () => {
  it('is the date-holidays version installed, with its data version', () => {
    const manifest = createRequire(import.meta.url).resolve('date-holidays/package.json');
    const installed = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    expect(DATE_HOLIDAYS_VERSION).toBe(installed);
    expect(HOLIDAY_LIBRARY).toMatch(new RegExp(`^date-holidays ${installed}, data \\d{4}-\\d{2}-\\d{2}$`));
  });
});
