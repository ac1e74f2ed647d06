// Freezes, calendars and change calendars in the config: bad input is an error naming the field,
// and a calendar that cannot be evaluated names the calendar and the event.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from '../../../functions/core/config/index.ts';
import { zonedInstant } from '../../../functions/core/config/zoned-time.ts';

const gate = (fields: Record<string, unknown>) => ({ gates: [{ name: 'g', default: 'open', ...fields }] });
const errorOf = (input: unknown): string => {
  try {
    parseConfig(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('parsed without error');
};
const ics = (...event: string[]) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//t//t//EN',
    'BEGIN:VEVENT',
    'UID:1',
    ...event,
    'END:VEVENT',
    'END:VCALENDAR',
  ].join('\r\n');

describe('freezes', () => {
  it('are read as local date-times in their time zone', () => {
    const config = parseConfig(
      gate({ freezes: [{ from: '2026-12-24', to: '2026-12-27T06:30', timeZone: 'Europe/Berlin' }] }),
    );
    expect(config.gates[0]!.freezes).toEqual([
      { from: '2026-12-24', to: '2026-12-27T06:30', timeZone: 'Europe/Berlin' },
    ]);
  });

  it.each([
    [{ from: '2026-12-27', to: '2026-12-24' }, 'freezes[0].to: must be after from (2026-12-27 UTC)'],
    [{ from: '2026-01-01', to: '2027-06-01' }, 'freezes[0].to: is more than a year after from'],
    [
      { from: '2026-12-24T18:00Z', to: '2026-12-27' },
      'freezes[0].from: "2026-12-24T18:00Z" is not a local date-time',
    ],
    [
      { from: '2026-02-30', to: '2026-03-02' },
      'freezes[0].from: "2026-02-30" is not a date and time that exists',
    ],
    [
      { from: '2026-12-24', to: '2026-12-27', timeZone: 'Mars/Olympus' },
      'freezes[0].timeZone: "Mars/Olympus" is not an IANA time zone',
    ],
    [{ from: '2026-12-24', to: '2026-12-27', why: 'x' }, 'freezes[0]: unknown field "why"'],
  ])('%j is refused: %s', (freeze, message) => {
    expect(errorOf(gate({ freezes: [freeze] }))).toContain(`gates[g].${message}`);
  });
});

describe('calendars', () => {
  it.each([
    [
      'not iCalendar',
      'BEGIN:VCALENDAR\r\nnonsense\r\nEND:VCALENDAR',
      'calendar "c" is not iCalendar (RFC 5545): invalid line',
    ],
    ['no events', 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR', 'calendar "c" has no events (VEVENT)'],
    [
      'an unknown TZID',
      ics('DTSTART;TZID=Atlantis/Capital:20261224T000000', 'DURATION:PT1H', 'SUMMARY:x'),
      'TZID "Atlantis/Capital" is neither a VTIMEZONE of the calendar nor an IANA time zone',
    ],
    [
      'an event with no length',
      ics('DTSTART:20261224T000000Z', 'SUMMARY:Eve'),
      'calendar "c" event "Eve" has no length',
    ],
    [
      'an hourly rule',
      ics('DTSTART:20261224T000000Z', 'DURATION:PT10M', 'RRULE:FREQ=HOURLY', 'SUMMARY:Tick'),
      'RRULE FREQ=HOURLY is refused',
    ],
  ])('%s is refused, naming the calendar', (_, text, message) => {
    const error = errorOf(gate({ calendars: [{ name: 'c', ics: text }] }));
    expect(error).toContain('gates[g].calendars[c].ics:');
    expect(error).toContain(message);
  });

  it('a file that is not read (outside a config file or the construct) says so; a missing file names its field', () => {
    expect(errorOf(gate({ calendars: [{ file: 'holidays.ics' }] }))).toContain(
      'gates[g].calendars[0].file: "holidays.ics" was not read',
    );
    const dir = mkdtempSync(join(tmpdir(), 'sluice-calendar-'));
    writeFileSync(
      join(dir, 'sluice.yaml'),
      'gates:\n  - { name: g, default: open, calendars: [{ file: missing.ics }] }\n',
    );
    expect(() => loadConfigFile(join(dir, 'sluice.yaml'))).toThrow(
      /gates\[g\]\.calendars\[0\]\.file: cannot read .*missing\.ics/,
    );
  });

  it('a file is read relative to the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-calendar-'));
    const text = ics('DTSTART;VALUE=DATE:20261225', 'SUMMARY:Christmas');
    writeFileSync(join(dir, 'holidays.ics'), text);
    writeFileSync(
      join(dir, 'sluice.yaml'),
      'gates:\n  - { name: g, default: open, calendars: [{ file: holidays.ics, timeZone: Europe/Berlin }] }\n',
    );
    expect(loadConfigFile(join(dir, 'sluice.yaml')).gates[0]!.calendars).toEqual([
      { name: 'holidays.ics', ics: text, timeZone: 'Europe/Berlin' },
    ]);
  });
});

describe('change calendars', () => {
  it('take names and ARNs; anything else names the entry', () => {
    expect(
      parseConfig(
        gate({ changeCalendars: ['prod-freeze', 'arn:aws:ssm:us-east-1:123456789012:document/org-freeze'] }),
      ).gates[0]!.changeCalendars,
    ).toHaveLength(2);
    expect(errorOf(gate({ changeCalendars: ['no'] }))).toContain(
      'gates[g].changeCalendars[0]: "no" is not a Change Calendar name',
    );
    expect(errorOf(gate({ changeCalendars: ['arn:aws:s3:::bucket'] }))).toContain(
      'gates[g].changeCalendars[0]:',
    );
  });
});

describe('local date-times in a time zone (RFC 5545 and Temporal "compatible")', () => {
  const at = (text: string, timeZone: string) => {
    const [date, time = '00:00'] = text.split('T');
    const [year, month, day] = date!.split('-').map(Number);
    const [hour, minute] = time.split(':').map(Number);
    return new Date(
      zonedInstant(
        { year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second: 0 },
        timeZone,
      ),
    ).toISOString();
  };
  it('a skipped time is read with the offset before the gap; a repeated time is its first occurrence', () => {
    expect(at('2026-03-29T02:30', 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000Z'); // 03:30 CEST
    expect(at('2026-10-25T02:30', 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
    expect(at('2026-03-08T02:30', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
    expect(at('2026-11-01T01:30', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z'); // 01:30 EDT
    expect(at('2026-07-01T12:00', 'Asia/Kathmandu')).toBe('2026-07-01T06:15:00.000Z');
  });
});
