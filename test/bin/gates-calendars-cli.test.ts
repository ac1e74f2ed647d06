// `sluice gates` with a dated freeze and a calendar file, as a user runs it on the real components:
// the next change accounts for both.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sluice } from '../support/cli.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();

const HOLIDAYS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//sluice//test//EN',
  'BEGIN:VEVENT',
  'UID:ny@sluice.test',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;VALUE=DATE:20270101',
  'RRULE:FREQ=YEARLY',
  "SUMMARY:New Year's Day",
  'END:VEVENT',
  'END:VCALENDAR',
].join('\r\n');

describe('sluice gates with freezes and calendars', () => {
  it('shows the next change: the freeze starting, then the freeze ending straight into the calendar holiday, then the holiday ending', async () => {
    const gate = uniqueName('year-end');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
    writeFileSync(join(dir, 'holidays.ics'), HOLIDAYS);
    writeFileSync(
      join(dir, 'sluice.yaml'),
      [
        'gates:',
        `  - name: ${gate}`,
        '    default: open',
        '    freezes:',
        '      - { from: "2026-12-24T18:00", to: "2027-01-01", timeZone: Europe/Berlin, reason: year end }',
        '    calendars:',
        '      - { name: holidays, file: holidays.ics, timeZone: Europe/Berlin }',
        '',
      ].join('\n'),
    );
    expect((await sluice('register', '-f', join(dir, 'sluice.yaml'))).stdout).toContain(
      `gate ${gate} registered`,
    );

    const before = JSON.parse((await sluice('gates', gate, '--at', '2026-12-24T12:00:00Z', '--json')).stdout);
    expect(before).toMatchObject({
      status: { state: 'open' },
      nextChange: {
        at: '2026-12-24T17:00:00.000Z',
        state: 'closed',
        cause: 'freeze',
        reason: 'freeze "year end" (2026-12-24T18:00 to 2027-01-01, Europe/Berlin)',
      },
    });

    // The freeze ends at midnight, when the holiday begins: the gate stays closed until it ends.
    const during = JSON.parse((await sluice('gates', gate, '--at', '2026-12-30T12:00:00Z', '--json')).stdout);
    expect(during).toMatchObject({
      status: {
        state: 'closed',
        since: '2026-12-24T17:00:00.000Z',
        until: '2027-01-01T23:00:00.000Z',
        closedBy: { cause: 'freeze' },
      },
      nextChange: { at: '2027-01-01T23:00:00.000Z', state: 'open', cause: 'calendar' },
    });

    const table = await sluice('gates', gate, '--at', '2026-12-30T12:00:00Z');
    expect(table.stdout).toMatch(
      new RegExp(
        `${gate}\\s+closed \\(freeze\\)\\s+open\\s+5d ago\\s+in 2d\\s+opens in 2d \\(2027-01-01T23:00:00Z, calendar "holidays": event "New Year's Day" \\(2026-12-31T23:00:00.000Z to 2027-01-01T23:00:00.000Z\\)\\)`,
      ),
    );
  });
});

/** A calendar of `events` (each a VEVENT's lines) around the usual header. */
const calendarOf = (...components: string[][]) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//sluice//test//EN',
    ...components.flat(),
    'END:VCALENDAR',
  ].join('\r\n');

/** Writes a config of one gate with the calendar file `ics`; registers it. */
async function registerCalendar(gate: string, ics: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
  writeFileSync(join(dir, 'freezes.ics'), ics);
  writeFileSync(
    join(dir, 'sluice.yaml'),
    `gates:\n  - name: ${gate}\n    default: open\n    calendars:\n      - { file: freezes.ics }\n`,
  );
  return sluice('register', '-f', join(dir, 'sluice.yaml'));
}

describe('sluice register and sluice gates with what a calendar client exports', () => {
  it('a single instance without its master ("this occurrence only") closes the gate on its dates', async () => {
    const gate = uniqueName('moved');
    const registered = await registerCalendar(
      gate,
      calendarOf([
        'BEGIN:VEVENT',
        'UID:weekly@sluice.test',
        'DTSTAMP:20260101T000000Z',
        'RECURRENCE-ID:20270105T090000Z',
        'DTSTART:20270106T090000Z',
        'DTEND:20270106T170000Z',
        'SUMMARY:Freeze (moved)',
        'END:VEVENT',
      ]),
    );
    expect(registered.stdout).toContain(`gate ${gate} registered`);
    const during = JSON.parse((await sluice('gates', gate, '--at', '2027-01-06T12:00:00Z', '--json')).stdout);
    expect(during).toMatchObject({
      status: { state: 'closed', since: '2027-01-06T09:00:00.000Z', closedBy: { cause: 'calendar' } },
      nextChange: { at: '2027-01-06T17:00:00.000Z', state: 'open' },
    });
  });

  it.each([
    [
      'a VTODO',
      calendarOf([
        'BEGIN:VTODO',
        'UID:todo@sluice.test',
        'DTSTAMP:20260101T000000Z',
        'SUMMARY:t',
        'END:VTODO',
      ]),
      /calendar "freezes\.ics" has a VTODO UID "todo@sluice\.test" \("t"\) component: sluice reads only VEVENTs/,
    ],
    [
      'only a cancelled event',
      calendarOf([
        'BEGIN:VEVENT',
        'UID:off@sluice.test',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20270106T090000Z',
        'DTEND:20270106T170000Z',
        'STATUS:CANCELLED',
        'END:VEVENT',
      ]),
      /calendar "freezes\.ics" has no occurrence between 1970 and 2100/,
    ],
  ])(
    '%s: refused at register, naming the file and the component; nothing registered',
    async (_, ics, message) => {
      const gate = uniqueName('refused');
      const result = await registerCalendar(gate, ics);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toContain(`gate ${gate} registered`);
    },
  );
});

/** Writes a config of one gate with `fields` (YAML lines under the gate); registers it. */
async function registerGate(gate: string, fields: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-'));
  writeFileSync(
    join(dir, 'sluice.yaml'),
    [`gates:`, `  - name: ${gate}`, '    default: open', ...fields.map((line) => `    ${line}`), ''].join(
      '\n',
    ),
  );
  return sluice('register', '-f', join(dir, 'sluice.yaml'));
}

describe('sluice gates with a holiday set', () => {
  it('previews the holiday with --at, names the set and the library data, and warns of a schedule at a skipped time', async () => {
    const gate = uniqueName('bavaria');
    const registered = await registerGate(gate, [
      'holidays: { country: DE, region: BY, types: [public] }',
      'schedules:',
      '  - { cron: "30 2 ? * SUN *", timeZone: Europe/Berlin, action: close, window: 1h }',
    ]);
    expect(registered.stdout).toContain(`gate ${gate} registered`);

    // Fronleichnam 2026 (4 June), from midnight to midnight in Berlin (CEST).
    const during = JSON.parse((await sluice('gates', gate, '--at', '2026-06-04T09:00:00Z', '--json')).stdout);
    expect(during).toMatchObject({
      state: 'closed',
      status: {
        state: 'closed',
        since: '2026-06-03T22:00:00.000Z',
        until: '2026-06-04T22:00:00.000Z',
        closedBy: {
          cause: 'calendar',
          reason: 'holiday "Fronleichnam" (DE-BY public, 2026-06-04, Europe/Berlin)',
        },
      },
      nextChange: { at: '2026-06-04T22:00:00.000Z', state: 'open', cause: 'calendar' },
      holidays: { set: 'DE-BY', types: ['public'], timeZone: 'Europe/Berlin' },
    });
    expect(during.holidays.library).toMatch(/^date-holidays 3\.37\.0, data \d{4}-\d\d-\d\d$/);
    expect(during.warnings).toEqual([
      expect.stringMatching(
        /schedules\[0\] "30 2 \? \* SUN \*" \(Europe\/Berlin\) fires at local times clocks skip/,
      ),
    ]);
    const before = JSON.parse((await sluice('gates', gate, '--at', '2026-06-03T12:00:00Z', '--json')).stdout);
    expect(before).toMatchObject({
      state: 'open',
      nextChange: { at: '2026-06-03T22:00:00.000Z', state: 'closed' },
    });

    const table = await sluice('gates', gate, '--at', '2026-06-04T09:00:00Z');
    expect(table.stdout).toMatch(new RegExp(`${gate}\\s+closed \\(calendar\\)`));
    expect(table.stdout).toMatch(
      new RegExp(
        `HOLIDAYS gate '${gate}': DE-BY public \\(Europe/Berlin\\), from date-holidays 3\\.37\\.0, data \\d{4}-\\d\\d-\\d\\d`,
      ),
    );
    expect(table.stdout).toMatch(
      /WARNING gate '.*' schedules\[0\] .*EventBridge Scheduler does not fire it then/,
    );
  });

  it.each([
    ['holidays: { country: DE, region: XY }', /holidays\.region: "XY" is not a region of DE/],
    ['holidays: { country: Germany }', /holidays\.country: "Germany" is not a country date-holidays knows/],
    ['holidays: { country: US, types: [federal] }', /holidays\.types\[0\]: "federal" is not a holiday type/],
  ])(
    '%s is refused at register, naming the gate and the field; nothing registered',
    async (line, message) => {
      const gate = uniqueName('refused');
      const result = await registerGate(gate, [line]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(new RegExp(`${gate}`));
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toContain(`gate ${gate} registered`);
    },
  );
});
