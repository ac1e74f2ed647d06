// Gates with calendars in the construct: GetCalendarState on exactly the Change Calendars named,
// for the reconcile and gate functions; calendar files read at synth (templates only).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSpecs } from '../../lib/config.ts';
import { sluicePropsFromConfigFile } from '../../lib/config-file.ts';
import type { SluiceDelivery } from '../../lib/index.ts';
import { ACCOUNT, ECR_URL, REGION, logicalId, statementsOf, synth } from './synth.ts';

process.env.CDK_VALIDATION = 'false';

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
