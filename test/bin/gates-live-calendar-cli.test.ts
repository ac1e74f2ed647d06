// `sluice gates --at` with a calendar read from S3 (the S3 stand-in, SigV4 verified), as a user runs
// it on the real components: the object's event closes the gate at the time asked about, and the
// calendar's source, ETag and age are shown.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_IDENTITY } from '../../dev/sigv4-identity.ts';
import { sluice, sluiceWith } from '../support/cli.ts';
import { startS3StandIn, type S3StandIn } from '../support/s3.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();
let standIn: S3StandIn;
beforeAll(async () => {
  // The CLI signs with the local components' key pair (AWS_ACCESS_KEY_ID=local).
  standIn = await startS3StandIn([LOCAL_IDENTITY]);
});
afterAll(() => standIn.close());

const FREEZE = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//sluice//test//EN',
  'BEGIN:VEVENT',
  'UID:freeze@sluice.test',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;VALUE=DATE:20261224',
  'DTEND;VALUE=DATE:20261227',
  'SUMMARY:Christmas freeze',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe('sluice gates with a calendar read from S3', () => {
  it('--at a date of the object closes the gate by its event; the calendar line names its source, ETag and age', async () => {
    const gate = uniqueName('live-freeze');
    const key = `${gate}/freeze.ics`;
    const etag = standIn.s3.putObject('release-calendars', key, FREEZE);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-gates-live-'));
    writeFileSync(
      join(dir, 'sluice.yaml'),
      [
        'gates:',
        `  - name: ${gate}`,
        '    default: open',
        '    calendars:',
        `      - { name: freeze, s3: { bucket: release-calendars, key: ${key} }, timeZone: Europe/Berlin }`,
        '',
      ].join('\n'),
    );
    expect((await sluice('register', '-f', join(dir, 'sluice.yaml'))).stdout).toContain(
      `gate ${gate} registered`,
    );
    const env = { ...process.env, AWS_ENDPOINT_URL_S3: standIn.endpoint };

    const during = JSON.parse(
      (await sluiceWith(env, 'gates', gate, '--at', '2026-12-25T12:00:00Z', '--json')).stdout,
    );
    expect(during).toMatchObject({
      state: 'closed',
      cause: 'calendar',
      status: {
        state: 'closed',
        until: '2026-12-26T23:00:00.000Z',
        closedBy: {
          cause: 'calendar',
          reason:
            'calendar "freeze": event "Christmas freeze" (2026-12-23T23:00:00.000Z to 2026-12-26T23:00:00.000Z)',
        },
      },
      liveCalendars: [
        {
          name: 'freeze',
          source: `s3://release-calendars/${key}`,
          etag,
          maxStalenessMs: 86_400_000,
          stale: false,
        },
      ],
    });

    const before = await sluiceWith(env, 'gates', gate, '--at', '2026-12-20T12:00:00Z');
    expect(before.stdout).toMatch(new RegExp(`${gate}\\s+open\\s+open`));
    expect(before.stdout).toMatch(
      new RegExp(
        `CALENDAR gate '${gate}': calendar "freeze" from s3://release-calendars/${key}: last good copy \\d+s old \\(ETag ${etag}\\), fresh \\(stale after 1d\\)\\n`,
      ),
    );
    // The second read sent the first copy's ETag and was answered 304.
    expect(
      standIn.s3.requests.filter((r) => r.path === `/release-calendars/${key}`).map((r) => r.status),
    ).toEqual([200, 304]);
  });
});
