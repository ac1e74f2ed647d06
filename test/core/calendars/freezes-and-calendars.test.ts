// Dated freezes, iCalendar calendars and SSM Change Calendars on the real components (DynamoDB
// Local, the kube-apiserver, the SSM stand-in) with an injected clock: each holds a delivery for
// its span, an approved open request does not lift it, and the delivery goes through after it.
import { SSMClient } from '@aws-sdk/client-ssm';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssmChangeCalendarReader } from '../../../functions/core/aws/ssm-change-calendar.ts';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { createSsmEndpoint, type SsmEndpoint } from '../../../dev/ssm-endpoint.ts';
import { run } from '../../support/deliveries.ts';
import { gatedDelivery, inProcessGateDeps } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

const OPS = {
  accessKeyId: 'AKIAOPSXXXXXXXXXXXXX',
  secretAccessKey: 'secret-of-ops',
  arn: 'arn:aws:iam::123456789012:role/sluice-reconcile',
};
let ssm: SsmEndpoint;
let ssmClient: SSMClient;

beforeAll(async () => {
  ssm = createSsmEndpoint({
    identities: [OPS],
    documents: new Map(),
    invoke: async () => ({ statusCode: 200, payload: '' }),
  });
  await new Promise<void>((ready) => ssm.server.listen(0, '127.0.0.1', ready));
  const endpoint = `http://127.0.0.1:${(ssm.server.address() as AddressInfo).port}`;
  ssmClient = new SSMClient({ endpoint, region: 'us-east-1', credentials: OPS });
});
afterAll(async () => {
  ssmClient.destroy();
  await new Promise((done) => ssm.server.close(done));
});

/** A delivery of one ConfigMap in a fresh namespace behind one fresh gate; `push` makes a new revision. */
async function setup(start: string, gateSpec: Record<string, unknown>) {
  const gated = await gatedDelivery(bed, {
    start,
    gate: gateSpec,
    blocks: 'all',
    names: { gate: 'frozen', delivery: 'frozen', repository: 'freezes/app' },
    deps: { changeCalendarStates: ssmChangeCalendarReader(ssmClient) },
  });
  return { ...gated, push: gated.pushValue };
}

describe('a dated freeze', () => {
  it('holds a delivery from its start to its end (Berlin time), an approval does not lift it, and the delivery goes through after', async () => {
    // 2026-12-24 00:00 to 2026-12-27 00:00 in Berlin (CET, UTC+1): 23:00Z to 23:00Z.
    const { clock, deps, gate, delivery, push, applied } = await setup('2026-12-23T22:59:00Z', {
      default: 'open',
      window: '1h',
      freezes: [
        { from: '2026-12-24', to: '2026-12-27T00:00', timeZone: 'Europe/Berlin', reason: 'holidays' },
      ],
    });
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v1');

    clock.set('2026-12-23T23:00:00Z');
    await push('v2');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toBe(
      `waiting for gate '${gate}' (closed by freeze "holidays" (2026-12-24 to 2026-12-27T00:00, Europe/Berlin); opens at 2026-12-26T23:00:00Z)`,
    );
    expect(await applied()).toBe('v1');
    expect((await getStatus(deps.db, delivery))?.blockedBy).toEqual([
      {
        name: gate,
        blocks: 'all',
        opensAt: '2026-12-26T23:00:00.000Z',
        closedBy: 'freeze "holidays" (2026-12-24 to 2026-12-27T00:00, Europe/Berlin)',
        closedByCause: 'freeze',
      },
    ]);

    // An approved open request is recorded, but the freeze holds: the gate stays closed.
    const gateDeps = inProcessGateDeps(deps);
    clock.set('2026-12-25T10:00:00Z');
    const opened = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', reason: 'hotfix', requestedBy: 'alice' }),
      gateDeps,
    );
    expect(opened).toMatchObject({ outcome: 'accepted', status: { state: 'closed' }, reconciling: [] });
    // The answer gives what was recorded, then the state a delivery meets and why.
    expect(opened.effective).toMatchObject({ state: 'closed', cause: 'freeze' });
    expect(opened.message).toBe(
      `recorded: gate '${gate}' is open (open by alice (unverified): hotfix); the gate stays closed: freeze "holidays" (2026-12-24 to 2026-12-27T00:00, Europe/Berlin)`,
    );
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(await applied()).toBe('v1');

    clock.set('2026-12-26T23:00:00Z');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');
  });
});

const HOLIDAYS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//sluice//test//EN',
  'BEGIN:VEVENT',
  'UID:christmas@sluice.test',
  'DTSTAMP:20240101T000000Z',
  'DTSTART;VALUE=DATE:20241225',
  'RRULE:FREQ=YEARLY',
  'EXDATE;VALUE=DATE:20261225',
  'SUMMARY:Christmas Day',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe('an iCalendar calendar', () => {
  it('an all-day holiday recurring yearly holds the delivery each year (New York time) but the year its EXDATE takes out', async () => {
    const { clock, deps, gate, delivery, push, applied } = await setup('2025-12-25T04:59:00Z', {
      default: 'open',
      calendars: [{ name: 'us-holidays', ics: HOLIDAYS, timeZone: 'America/New_York' }],
    });
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });

    clock.set('2025-12-25T05:00:00Z'); // midnight in New York (EST, UTC-5)
    await push('v2');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toBe(
      `waiting for gate '${gate}' (closed by calendar "us-holidays": event "Christmas Day" (2025-12-25T05:00:00.000Z to 2025-12-26T05:00:00.000Z); opens at 2025-12-26T05:00:00Z)`,
    );
    expect(await applied()).toBe('v1');

    clock.set('2025-12-26T05:00:00Z');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');

    clock.set('2026-12-25T17:00:00Z'); // the EXDATE: no holiday this year
    await push('v3');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v3');

    clock.set('2027-12-25T17:00:00Z');
    await push('v4');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(await applied()).toBe('v3');
    const { status, nextChange } = await gateStatus(gate, deps);
    expect(status).toMatchObject({
      state: 'closed',
      since: '2027-12-25T05:00:00.000Z',
      until: '2027-12-26T05:00:00.000Z',
      closedBy: { cause: 'calendar' },
    });
    expect(nextChange).toMatchObject({ at: '2027-12-26T05:00:00.000Z', state: 'open', cause: 'calendar' });
  });
});

// What a calendar client exports for "this occurrence only" of a weekly freeze: the instance
// (RECURRENCE-ID), without its master.
const ONE_OCCURRENCE = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//sluice//test//EN',
  'BEGIN:VEVENT',
  'UID:weekly-freeze@sluice.test',
  'DTSTAMP:20260101T000000Z',
  'RECURRENCE-ID:20260305T090000Z',
  'DTSTART:20260306T090000Z',
  'DTEND:20260306T170000Z',
  'SUMMARY:Release freeze (moved)',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe('a single instance of a recurring event, without its master', () => {
  it('is an event of its own: it holds the delivery from its DTSTART to its DTEND', async () => {
    const { clock, deps, gate, delivery, push, applied } = await setup('2026-03-06T08:59:00Z', {
      default: 'open',
      calendars: [{ name: 'freezes', ics: ONE_OCCURRENCE }],
    });
    await push('v1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });

    clock.set('2026-03-06T09:00:00Z');
    await push('v2');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toBe(
      `waiting for gate '${gate}' (closed by calendar "freezes": event "Release freeze (moved)" (2026-03-06T09:00:00.000Z to 2026-03-06T17:00:00.000Z); opens at 2026-03-06T17:00:00Z)`,
    );
    expect(await applied()).toBe('v1');

    clock.set('2026-03-06T17:00:00Z');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');
  });
});

describe('an SSM Change Calendar', () => {
  it('CLOSED holds the delivery (opening when it says), OPEN releases it, and one that cannot be read holds it', async () => {
    const calendar = uniqueName('cab-freeze');
    ssm.setCalendarState(calendar, { state: 'CLOSED', nextTransitionTime: '2026-06-01T08:00:00Z' });
    const { clock, deps, gate, delivery, push, applied } = await setup('2026-05-29T12:00:00Z', {
      default: 'open',
      changeCalendars: [`arn:aws:ssm:us-east-1:123456789012:document/${calendar}`],
    });
    await push('v1');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(held.message).toBe(
      `waiting for gate '${gate}' (closed by change calendar "arn:aws:ssm:us-east-1:123456789012:document/${calendar}" is CLOSED; opens at 2026-06-01T08:00:00Z)`,
    );
    expect(await applied()).toBeUndefined();

    ssm.setCalendarState(calendar, { state: 'OPEN' });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v1');

    ssm.setCalendarState(calendar, { error: 'AccessDeniedException' });
    clock.advance(60_000);
    await push('v2');
    const unreadable = await run(delivery, deps);
    expect(unreadable).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });
    expect(unreadable.message).toMatch(
      new RegExp(
        `closed by change calendar ".*${calendar}" could not be read \\(.*AccessDeniedException.*\\); the gate counts as closed until it can be; no opening known`,
      ),
    );
    expect(await applied()).toBe('v1');

    // No reader at all (no SSM client given): closed too.
    const { changeCalendarStates: _, ...withoutReader } = deps;
    expect(await run(delivery, withoutReader)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });

    ssm.setCalendarState(calendar, { state: 'OPEN', nextTransitionTime: '2026-06-05T00:00:00Z' });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await applied()).toBe('v2');
    const { nextChange } = await gateStatus(gate, deps);
    expect(nextChange).toMatchObject({
      at: '2026-06-05T00:00:00.000Z',
      state: 'closed',
      cause: 'change-calendar',
    });
  });
});
