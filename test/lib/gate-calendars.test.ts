// Gates with calendars in the construct: GetCalendarState on exactly the Change Calendars named,
// for the reconcile and gate functions; calendar files read at synth (templates only).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, type Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { resolveSpecs } from '../../lib/config.ts';
import { sluicePropsFromConfigFile } from '../../lib/config-file.ts';
import type { SluiceDelivery, SluiceProps } from '../../lib/index.ts';
import {
  ACCOUNT,
  ECR_URL,
  REGION,
  logicalId,
  statementsOf,
  synth,
  withoutCloudFormationChecks,
} from './synth.ts';

withoutCloudFormationChecks();

const NAMED = { eks: { name: 'staging', region: 'eu-west-1' } };
const delivery = (fields: Partial<SluiceDelivery> = {}): SluiceDelivery => ({
  name: 'app',
  source: { url: ECR_URL },
  cluster: NAMED,
  ...fields,
});
const SHARED = 'arn:aws:ssm:us-east-1:210987654321:document/org-freeze';
const ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//sluice//test//EN',
  'BEGIN:VEVENT',
  'UID:1@sluice.test',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;VALUE=DATE:20261225',
  'SUMMARY:Christmas',
  'END:VEVENT',
  'END:VCALENDAR',
].join('\r\n');

describe('change calendars', () => {
  it('ssm:GetCalendarState on exactly the calendars named (a name in this account and region), for the deployer and the gate role; none without', () => {
    const { template } = synth(() => ({
      gates: [
        { name: 'cab', default: 'open', changeCalendars: ['prod-freeze', SHARED] },
        { name: 'plain', default: 'open' },
      ],
      deliveries: [delivery({ gates: [{ name: 'cab' }, { name: 'plain' }] })],
    }));
    const own = {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:ssm:${REGION}:${ACCOUNT}:document/prod-freeze`]],
    };
    for (const description of ['sluice: reconciles', 'sluice: records gate requests']) {
      const role = logicalId(template, 'AWS::IAM::Role', (p) =>
        String(p.Description).startsWith(description),
      );
      const statements = statementsOf(template, role).filter((s) =>
        String(s.Action).includes('GetCalendarState'),
      );
      expect(statements).toEqual([
        { Action: 'ssm:GetCalendarState', Effect: 'Allow', Resource: expect.arrayContaining([own, SHARED]) },
      ]);
    }
    const { template: plain } = synth(() => ({ deliveries: [delivery()] }));
    expect(JSON.stringify(plain.toJSON())).not.toContain('GetCalendarState');
  });
});

describe('calendar files', () => {
  it('are read at synth into the gate spec; a file that cannot be read names its field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-calendars-'));
    writeFileSync(join(dir, 'holidays.ics'), ICS);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const specs = resolveSpecs({
        gates: [
          {
            name: 'holidays',
            default: 'open',
            calendars: [{ file: 'holidays.ics', timeZone: 'Europe/Berlin' }],
          },
        ],
      });
      expect(specs.config.gates[0]!.calendars).toEqual([
        { name: 'holidays.ics', ics: ICS, timeZone: 'Europe/Berlin' },
      ]);
      expect(specs.gateInputs.get('holidays')!.calendars).toEqual([
        { file: 'holidays.ics', ics: ICS, timeZone: 'Europe/Berlin' },
      ]);
      expect(() =>
        resolveSpecs({
          gates: [{ name: 'holidays', default: 'open', calendars: [{ file: 'missing.ics' }] }],
        }),
      ).toThrow(/gates\[holidays\]\.calendars\[0\]\.file: cannot read .*missing\.ics/);
      // A named calendar is reported by its name, never as calendars[NaN].
      expect(() =>
        resolveSpecs({
          gates: [
            {
              name: 'holidays',
              default: 'open',
              calendars: [
                { name: 'christmas', file: 'holidays.ics' },
                { name: 'easter', file: 'missing.ics' },
              ],
            },
          ],
        }),
      ).toThrow(/gates\[holidays\]\.calendars\[easter\]\.file: cannot read .*missing\.ics/);
    } finally {
      process.chdir(cwd);
    }
  });

  it('Sluice.fromConfigFile reads them relative to the config file, as the CLI does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-calendars-'));
    writeFileSync(join(dir, 'holidays.ics'), ICS);
    writeFileSync(
      join(dir, 'sluice.yaml'),
      'gates:\n  - name: holidays\n    default: open\n    calendars: [{ name: christmas, file: holidays.ics }]\n',
    );
    const props = sluicePropsFromConfigFile(join(dir, 'sluice.yaml'));
    expect(resolveSpecs(props).config.gates[0]!.calendars).toEqual([
      { name: 'christmas', ics: ICS, timeZone: 'UTC' },
    ]);
  });
});

describe('calendars refused at synth rather than skipped', () => {
  const calendar = (...lines: string[]) =>
    ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//sluice//test//EN', ...lines, 'END:VCALENDAR'].join('\r\n');
  const event = (...lines: string[]) => [
    'BEGIN:VEVENT',
    'UID:e@sluice.test',
    'DTSTAMP:20260101T000000Z',
    ...lines,
    'END:VEVENT',
  ];
  const synthWith = (ics: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-calendars-'));
    writeFileSync(join(dir, 'freezes.ics'), ics);
    writeFileSync(
      join(dir, 'sluice.yaml'),
      'gates:\n  - name: freezes\n    default: open\n    calendars: [{ file: freezes.ics }]\n',
    );
    return () => resolveSpecs(sluicePropsFromConfigFile(join(dir, 'sluice.yaml')));
  };

  it.each([
    [
      'a VJOURNAL',
      calendar(
        ...event('DTSTART:20270106T090000Z', 'DTEND:20270106T170000Z'),
        'BEGIN:VJOURNAL',
        'UID:j@sluice.test',
        'END:VJOURNAL',
      ),
      /gates\[freezes\]\.calendars\[0\]\.ics: calendar "freezes\.ics" has a VJOURNAL UID "j@sluice\.test" component/,
    ],
    [
      'a VFREEBUSY',
      calendar('BEGIN:VFREEBUSY', 'UID:f@sluice.test', 'END:VFREEBUSY'),
      /calendar "freezes\.ics" has a VFREEBUSY UID "f@sluice\.test" component/,
    ],
    [
      'an EXRULE (a property sluice does not read)',
      calendar(
        ...event(
          'DTSTART:20270106T090000Z',
          'DTEND:20270106T170000Z',
          'RRULE:FREQ=WEEKLY',
          'EXRULE:FREQ=MONTHLY',
        ),
      ),
      /calendar "freezes\.ics" VEVENT UID "e@sluice\.test": property EXRULE is not read by sluice/,
    ],
    [
      'an RDATE of periods',
      calendar(
        ...event(
          'DTSTART:20270106T090000Z',
          'DTEND:20270106T170000Z',
          'RDATE;VALUE=PERIOD:20270201T090000Z/20270201T170000Z',
        ),
      ),
      /VEVENT UID "e@sluice\.test": RDATE;VALUE=PERIOD is not supported/,
    ],
    [
      'an instance that replaces no occurrence of its master',
      calendar(
        ...event('DTSTART:20270106T090000Z', 'DTEND:20270106T170000Z', 'RRULE:FREQ=WEEKLY'),
        ...event('RECURRENCE-ID:20270107T090000Z', 'DTSTART:20270108T090000Z', 'DTEND:20270108T170000Z'),
      ),
      /VEVENT UID "e@sluice\.test": RECURRENCE-ID 2027-01-07T09:00:00Z is not an occurrence of its master/,
    ],
    [
      'an event whose every occurrence is excluded (it would close nothing)',
      calendar(
        ...event(
          'DTSTART:20270106T090000Z',
          'DTEND:20270106T170000Z',
          'RRULE:FREQ=WEEKLY;COUNT=2',
          'EXDATE:20270106T090000Z,20270113T090000Z',
        ),
      ),
      /calendar "freezes\.ics" has no occurrence between 1970 and 2100/,
    ],
  ])('%s: the synth fails naming the file, the component and its UID', (_, ics, message) => {
    expect(synthWith(ics)).toThrow(message);
  });

  it('a single instance without its master is accepted (an event of its own)', () => {
    const ics = calendar(
      ...event('RECURRENCE-ID:20270105T090000Z', 'DTSTART:20270106T090000Z', 'DTEND:20270106T170000Z'),
    );
    expect(synthWith(ics)().config.gates[0]!.calendars).toEqual([
      { name: 'freezes.ics', ics, timeZone: 'UTC' },
    ]);
  });
});

/** The synth-time warnings on the stack's constructs (what `cdk synth` prints as [Warning]). */
const warningsOf = (stack: Stack): string[] =>
  stack.node
    .findAll()
    .flatMap((construct) => construct.node.metadata)
    .filter((entry) => entry.type === 'aws:cdk:warning')
    .map((entry) => String(entry.data));

describe('holiday sets and schedule times at synth', () => {
  it('a holiday set the library does not know fails the synth naming the gate and the field', () => {
    expect(() =>
      synth(() => ({
        gates: [{ name: 'bavaria', default: 'open', holidays: { country: 'DE', region: 'BZ' } }],
        deliveries: [delivery({ gates: [{ name: 'bavaria' }] })],
      })),
    ).toThrow(/gates\[bavaria\]\.holidays\.region: "BZ" is not a region of DE date-holidays knows/);
    expect(() =>
      synth(() => ({
        gates: [{ name: 'us', default: 'open', holidays: { country: 'US', types: ['bank holiday'] } }],
      })),
    ).toThrow(/gates\[us\]\.holidays\.types\[0\]: "bank holiday" is not a holiday type/);
  });

  it('a schedule at a local time clocks skip is warned about, naming the gate and schedule; one at a time that exists is not; a window in days stays in days', () => {
    const props: SluiceProps = {
      gates: [
        {
          name: 'nightly',
          default: 'open',
          holidays: { country: 'DE', region: 'BY' },
          schedules: [
            { cron: '30 2 * * ? *', timeZone: 'Europe/Berlin', action: 'close', window: Duration.days(1) },
            { cron: '30 3 * * ? *', timeZone: 'Europe/Berlin', action: 'close', window: Duration.hours(1) },
          ],
        },
      ],
      deliveries: [delivery({ gates: [{ name: 'nightly' }] })],
    };
    const { stack } = synth(() => props);
    const warnings = warningsOf(stack).filter((text) => text.includes('clocks skip'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /gate 'nightly' schedules\[0\] "30 2 \* \* \? \*" \(Europe\/Berlin\) fires at local times clocks skip when they go forward \(\d{4}-03-\d\dT02:30, \d{4}-03-\d\dT02:30\): EventBridge Scheduler does not fire it then.*\[ack: sluice:schedule-in-skipped-hour\]/,
    );
    const gate = resolveSpecs(props).config.gates[0]!;
    expect(gate.holidays).toEqual({
      country: 'DE',
      region: 'BY',
      types: ['public'],
      timeZone: 'Europe/Berlin',
    });
    expect(gate.schedules.map((s) => [s.windowMs, s.windowDays])).toEqual([
      [86_400_000, 1],
      [3_600_000, undefined],
    ]);
  });
});

describe('live calendars', () => {
  const liveGate = (calendars: NonNullable<SluiceProps['gates']>[number]['calendars']) => ({
    name: 'freeze',
    default: 'open' as const,
    calendars,
  });

  it('s3:GetObject on exactly the calendar objects named, for the deployer and the gate role; SLUICE_CALENDAR_HOSTS from calendarHosts; nothing without', () => {
    const { template } = synth(() => ({
      gates: [
        liveGate([
          {
            name: 'team',
            s3: { bucket: 'release-calendars', key: 'team/freeze.ics' },
            maxStaleness: Duration.hours(6),
          },
          { name: 'org', url: 'https://calendar.example.com/org.ics' },
        ]),
      ],
      calendarHosts: ['calendar.example.com'],
      deliveries: [delivery({ gates: [{ name: 'freeze' }] })],
    }));
    const object = {
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::release-calendars/team/freeze.ics']],
    };
    for (const description of ['sluice: reconciles', 'sluice: records gate requests']) {
      const role = logicalId(template, 'AWS::IAM::Role', (p) =>
        String(p.Description).startsWith(description),
      );
      const statements = statementsOf(template, role).filter((s) => JSON.stringify(s.Action).includes('s3:'));
      expect(statements).toEqual([{ Action: 's3:GetObject', Effect: 'Allow', Resource: object }]);
    }
    const functions = template.findResources('AWS::Lambda::Function');
    const hosts = Object.values(functions)
      .map((f) => (f as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties)
      .map((p) => p.Environment?.Variables?.SLUICE_CALENDAR_HOSTS)
      .filter((value) => value !== undefined);
    expect(hosts).toEqual(['["calendar.example.com"]', '["calendar.example.com"]']);
    const specs = resolveSpecs({
      gates: [
        liveGate([
          { s3: { bucket: 'release-calendars', key: 'team/freeze.ics' }, maxStaleness: Duration.hours(6) },
        ]),
      ],
    });
    expect(specs.config.gates[0]!.calendars).toEqual([
      {
        name: 'freeze.ics',
        source: { s3: { bucket: 'release-calendars', key: 'team/freeze.ics' } },
        timeZone: 'UTC',
        maxStalenessMs: 6 * 3_600_000,
      },
    ]);
    const { template: plain } = synth(() => ({ deliveries: [delivery()] }));
    expect(JSON.stringify(plain.toJSON())).not.toContain('s3:GetObject');
    expect(JSON.stringify(plain.toJSON())).not.toContain('SLUICE_CALENDAR_HOSTS');
  });

  it('refuses a URL on a host calendarHosts does not list, http://, an IP address, a key IAM would read as a wildcard, and two sources at once, naming each field', () => {
    const problems = (props: SluiceProps) => {
      try {
        resolveSpecs(props);
        return [];
      } catch (error) {
        return (error as { issues: { path: string; message: string }[] }).issues.map(
          (issue) => `${issue.path}: ${issue.message}`,
        );
      }
    };
    expect(
      problems({
        gates: [
          liveGate([
            { name: 'a', url: 'https://calendar.example.com/a.ics' },
            { name: 'b', url: 'http://calendar.example.com/b.ics' },
            { name: 'c', url: 'https://10.0.0.1/c.ics' },
            { name: 'd', s3: { bucket: 'cals', key: 'team/*.ics' } },
          ]),
          {
            name: 'two',
            default: 'open',
            calendars: [{ ics: ICS, url: 'https://calendar.example.com/x.ics' }],
          },
        ],
        calendarHosts: ['other.example.com'],
      }),
    ).toEqual([
      'gates[freeze].calendars[b].url: "http://calendar.example.com/b.ics" is not https://: a calendar is read over HTTPS only (or give it as an S3 object)',
      'gates[freeze].calendars[c].url: "https://10.0.0.1/c.ics": "10.0.0.1" is not a host name (lower-case DNS labels, e.g. calendar.example.com; IP addresses are not allowed)',
      'gates[freeze].calendars[d].s3.key: "team/*.ics" holds * ? or $, which an IAM policy reads as a wildcard or a variable: the stack\'s grant would reach other objects; rename the object',
      'gates[two].calendars[0].url: give one of ics, file, s3 and url, not ics and url',
      'gates[freeze].calendars[a].url: "https://calendar.example.com/a.ics": host "calendar.example.com" is not in calendarHosts (other.example.com)',
      'gates[two].calendars[0].url: "https://calendar.example.com/x.ics": host "calendar.example.com" is not in calendarHosts (other.example.com)',
    ]);
    // A config that is otherwise valid is refused for the host alone.
    expect(
      problems({
        gates: [liveGate([{ name: 'a', url: 'https://calendar.example.com/a.ics' }])],
        calendarHosts: ['other.example.com'],
      }),
    ).toEqual([
      'gates[freeze].calendars[a].url: "https://calendar.example.com/a.ics": host "calendar.example.com" is not in calendarHosts (other.example.com)',
    ]);
  });
});
