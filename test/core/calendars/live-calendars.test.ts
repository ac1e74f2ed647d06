// Gate calendars read live from S3 on the real components (DynamoDB Local, the kube-apiserver, the
// S3 stand-in verifying SigV4): the object's events hold a delivery; a new ETag is picked up and an
// unchanged one is confirmed with 304; an unreadable object keeps the last good copy within its
// staleness, saying its age, and closes the gate past it; too large or not iCalendar is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3CalendarReader } from '../../../functions/core/aws/s3-calendar-object.ts';
import { liveCalendarReader } from '../../../functions/core/calendars/live-calendars.ts';
import { gateStatus } from '../../../functions/core/gates/requests.ts';
import { run } from '../../support/deliveries.ts';
import { gatedDelivery, manualClock, type ManualClock } from '../../support/gates.ts';
import { FUNCTION_IDENTITY, s3Client, startS3StandIn, type S3StandIn } from '../../support/s3.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';
import { engineDeps } from '../../support/deliveries.ts';

const bed = testbed();
let standIn: S3StandIn;
beforeAll(async () => {
  standIn = await startS3StandIn();
});
afterAll(() => standIn.close());

const HOUR = 3_600_000;

/** A calendar of one all-day event per `[date, summary]` (read in Europe/Berlin). */
const calendar = (...events: [string, string][]) =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//sluice//test//EN',
    ...events.flatMap(([date, summary], index) => [
      'BEGIN:VEVENT',
      `UID:event-${index}@sluice.test`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART;VALUE=DATE:${date}`,
      `SUMMARY:${summary}`,
      'END:VEVENT',
    ]),
    'END:VCALENDAR',
    '',
  ].join('\r\n');

/**
 * A delivery behind a gate whose calendar is the S3 object `key` (put with `ics` first), read by
 * the functions' reader over the stand-in; the reader's clock is the run's (a copy's age counts on it).
 */
async function setup(start: string, ics: string | undefined, extra: Record<string, unknown> = {}) {
  const bucket = 'release-calendars';
  const key = `${uniqueName('team')}/freeze.ics`;
  if (ics !== undefined) standIn.s3.putObject(bucket, key, ics);
  const clockOf: { clock?: ManualClock } = {};
  const readClock: ManualClock = manualClock(start);
  const liveCalendars = liveCalendarReader({
    db: engineDeps().db,
    clock: { now: () => clockOf.clock!.now(), sleep: readClock.sleep },
    sources: { s3: s3CalendarReader(s3Client(standIn.endpoint, FUNCTION_IDENTITY)) },
  });
  const gated = await gatedDelivery(bed, {
    start,
    gate: {
      default: 'open',
      calendars: [{ name: 'freeze', s3: { bucket, key }, timeZone: 'Europe/Berlin', ...extra }],
    },
    blocks: 'revisions',
    names: { gate: 'live', delivery: 'live', repository: 'live/app' },
    deps: { liveCalendars },
  });
  clockOf.clock = gated.clock;
  const requests = () => standIn.s3.requests.filter((request) => request.path === `/${bucket}/${key}`);
  const status = () => gateStatus(gated.gate, gated.deps);
  return { ...gated, bucket, key, source: `s3://${bucket}/${key}`, requests, status };
}

describe('a calendar read from S3', () => {
  it('holds a new revision on its dates, says which event, and lets it through after; sluice gates names its source, ETag and age', async () => {
    const ics = calendar(['20261224', 'Christmas freeze']);
    const { clock, deps, gate, delivery, pushValue, applied, status, source, requests } = await setup(
      '2026-12-23T12:00:00Z',
      ics,
    );
    await pushValue('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v1');

    // 2026-12-24 in Berlin is 2026-12-23T23:00Z to 2026-12-24T23:00Z.
    clock.set('2026-12-24T09:00:00Z');
    await pushValue('v2');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(
      `gate '${gate}' (closed by calendar "freeze": event "Christmas freeze" (2026-12-23T23:00:00.000Z to 2026-12-24T23:00:00.000Z); opens at 2026-12-24T23:00:00Z)`,
    );
    expect(await applied()).toBe('v1');

    const report = await status();
    expect(report.status).toMatchObject({ state: 'closed', closedBy: { cause: 'calendar' } });
    expect(report.liveCalendars).toEqual([
      {
        name: 'freeze',
        source,
        etag: expect.stringMatching(/^"[0-9a-f]{32}"$/),
        confirmedAt: '2026-12-24T09:00:00.000Z',
        ageMs: 0,
        maxStalenessMs: 24 * HOUR,
        stale: false,
      },
    ]);
    // The first read took the object; every later one sent its ETag and was answered 304.
    expect(requests().map((request) => request.status)).toEqual([
      200,
      ...requests()
        .slice(1)
        .map(() => 304),
    ]);
    expect(requests().length).toBeGreaterThanOrEqual(3);

    clock.set('2026-12-24T23:00:00Z');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');
  });

  it('picks up a changed object (a new ETag): an event added closes the gate at the next evaluation', async () => {
    const { clock, deps, delivery, pushValue, applied, status, bucket, key, requests } = await setup(
      '2027-03-01T09:00:00Z',
      calendar(['20261224', 'Christmas freeze']),
    );
    await pushValue('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    const first = (await status()).liveCalendars![0]!.etag;

    const etag = standIn.s3.putObject(
      bucket,
      key,
      calendar(['20261224', 'Christmas freeze'], ['20270302', 'Audit']),
    );
    expect(etag).not.toBe(first);
    clock.set('2027-03-02T09:00:00Z');
    await pushValue('v2');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain('calendar "freeze": event "Audit"');
    expect(await applied()).toBe('v1');
    expect((await status()).liveCalendars![0]).toMatchObject({ etag, stale: false });
    expect(requests().filter((request) => request.status === 200)).toHaveLength(2);
  });

  it('keeps the last good copy while the object cannot be read, saying its age, and closes the gate naming the calendar once the copy is past its staleness', async () => {
    const { clock, deps, gate, delivery, pushValue, applied, status, bucket, key, source } = await setup(
      '2027-04-01T09:00:00Z',
      calendar(['20270405', 'Release freeze']),
      { maxStaleness: '6h' },
    );
    await pushValue('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    const { etag } = (await status()).liveCalendars![0]!;

    standIn.s3.deleteObject(bucket, key);
    clock.set('2027-04-01T14:00:00Z');
    await pushValue('v2');
    // Within its staleness the copy stands (no event today): the revision goes through.
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');
    expect((await status()).liveCalendars).toEqual([
      {
        name: 'freeze',
        source,
        etag,
        confirmedAt: '2027-04-01T09:00:00.000Z',
        ageMs: 5 * HOUR,
        maxStalenessMs: 6 * HOUR,
        stale: false,
        problem: `could not be read: s3:GetObject of ${source} failed: NoSuchKey: The specified key does not exist.`,
      },
    ]);

    clock.set('2027-04-01T15:00:01Z');
    await pushValue('v3');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    const why = `calendar "freeze" (${source}): its last good copy is 6h1s old, past its maxStaleness of 6h (could not be read: s3:GetObject of ${source} failed: NoSuchKey: The specified key does not exist.); the gate counts as closed until it is read again`;
    expect(held.message).toContain(`gate '${gate}' (closed by ${why}`);
    expect(await applied()).toBe('v2');
    const report = await status();
    expect(report.effective).toMatchObject({ state: 'closed', cause: 'calendar' });
    expect(report.liveCalendars![0]).toMatchObject({ stale: true, ageMs: 6 * HOUR + 1000 });

    // The object back: read again, the copy is fresh and the gate open.
    standIn.s3.putObject(bucket, key, calendar(['20270405', 'Release freeze']));
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v3');
  });

  it('refuses an object that is too large or not iCalendar, keeping the last good copy and saying why', async () => {
    const { clock, deps, delivery, pushValue, status, bucket, key } = await setup(
      '2027-05-02T12:00:00Z',
      calendar(['20270503', 'Maintenance']),
    );
    await pushValue('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    const { etag } = (await status()).liveCalendars![0]!;

    standIn.s3.putObject(bucket, key, 'x'.repeat(1024 * 1024 + 1));
    expect((await status()).liveCalendars![0]).toMatchObject({
      etag,
      stale: false,
      problem: `could not be read: s3://${bucket}/${key} is 1048577 bytes, more than 1 MiB: refused unread`,
    });

    const notIcs = standIn.s3.putObject(bucket, key, '<html>Maintenance page</html>');
    const refused = (await status()).liveCalendars![0]!;
    expect(refused).toMatchObject({ etag, stale: false });
    expect(refused.problem).toMatch(
      new RegExp(`^was read \\(ETag ${notIcs}\\) but refused: it is not iCalendar \\(RFC 5545\\): `),
    );

    // The last good copy (11 h old, within its 24 h) still closes the gate on its date: 2027-05-03 in Berlin.
    clock.set('2027-05-02T23:00:00Z');
    await pushValue('v2');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain('calendar "freeze": event "Maintenance"');
  });

  it('closes the gate when no good copy was ever read, naming the calendar and why', async () => {
    const { deps, gate, delivery, pushValue, source } = await setup('2027-06-01T09:00:00Z', undefined);
    await pushValue('v1');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toContain(
      `gate '${gate}' (closed by calendar "freeze" (${source}) has no good copy yet (could not be read: s3:GetObject of ${source} failed: NoSuchKey: The specified key does not exist.); the gate counts as closed until one is read`,
    );
  });
});
