// Gate requests on DynamoDB Local: ordering by requestedAt, the audit trail, and bad requests.
import { describe, expect, it } from 'vitest';
import { GateEventError, parseGateEvent } from '../../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

async function freshGate(
  spec: Record<string, unknown> = { default: 'open' },
  start = '2026-06-01T12:00:00Z',
) {
  const clock = manualClock(start);
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('gate');
  await registerGate(deps, { name: gate, ...spec });
  return { clock, deps, gate, gateDeps: inProcessGateDeps(deps) };
}

const request = (fields: Record<string, unknown>) => parseGateEvent({ source: 'cli', ...fields });

describe('gate requests', () => {
  it('ignores a request recorded by a clock behind the stored one, reports it as stale, and audits both', async () => {
    const { gate, gateDeps } = await freshGate();
    const recordedAt = (iso: string) => ({ ...gateDeps, clock: manualClock(iso) });
    const newer = await handleGateEvent(
      request({ gate, action: 'close', requestedBy: 'bob', reason: 'incident' }),
      recordedAt('2026-06-01T11:59:00Z'),
    );
    expect(newer.outcome).toBe('accepted');
    const older = await handleGateEvent(
      request({ gate, action: 'open', requestedBy: 'alice', reason: 'late' }),
      recordedAt('2026-06-01T11:58:00Z'),
    );
    expect(older.outcome).toBe('stale');
    expect(older.message).toMatch(
      /^request ignored: a request made at or after 2026-06-01T11:58:00.000Z is already stored \(close by bob/,
    );
    expect(await getGateRequest(gateDeps.db, gate)).toMatchObject({ action: 'close', requestedBy: 'bob' });

    const audit = await listGateAudit(gateDeps.db, gate);
    expect(audit.map((r) => [r.action, r.requestedBy, r.reason, r.source, r.outcome])).toEqual([
      ['close', 'bob', 'incident', 'cli', 'accepted'],
      ['open', 'alice', 'late', 'cli', 'stale'],
    ]);
  });

  it('concurrent requests resolve by recording time: the latest wins, none is lost, all are audited', async () => {
    const { gate, gateDeps } = await freshGate();
    const times = Array.from(
      { length: 20 },
      (_, i) => new Date(Date.parse('2026-06-01T10:00:00Z') + i * 1000),
    );
    const shuffled = [...times].sort(() => Math.random() - 0.5);
    const results = await Promise.all(
      shuffled.map((at, i) =>
        handleGateEvent(
          request({ gate, action: i % 2 === 0 ? 'open' : 'close', requestedBy: `user-${at.getTime()}` }),
          { ...gateDeps, clock: manualClock(at.toISOString()) },
        ),
      ),
    );
    const latest = times.at(-1)!.toISOString();
    expect(await getGateRequest(gateDeps.db, gate)).toMatchObject({ requestedAt: latest });
    const audit = await listGateAudit(gateDeps.db, gate);
    expect(audit).toHaveLength(20);
    expect(audit[0]).toMatchObject({ requestedAt: latest, outcome: 'accepted' });
    expect(results.filter((r) => r.outcome === 'accepted').length).toBeGreaterThanOrEqual(1);
    expect(new Set(audit.map((r) => r.requestedBy)).size).toBe(20);
  });

  it('a request without window lasts until the next request; with one it overrides the gate window', async () => {
    const { gate, gateDeps, clock } = await freshGate({ default: 'closed', window: '1h' });
    const twoHours = await handleGateEvent(request({ gate, action: 'open', window: '2h' }), gateDeps);
    expect(twoHours.status.until).toBe('2026-06-01T14:00:00.000Z');
    clock.advance(60_000);
    const gateWindow = await handleGateEvent(request({ gate, action: 'open' }), gateDeps);
    expect(gateWindow.status.until).toBe('2026-06-01T13:01:00.000Z');

    const { gate: open, gateDeps: openDeps } = await freshGate({ default: 'open' });
    const untilNext = await handleGateEvent(request({ gate: open, action: 'close' }), openDeps);
    expect(untilNext.status).toMatchObject({ state: 'closed', byRequest: true });
    expect(untilNext.status.until).toBeUndefined();
    expect(untilNext.nextChange).toBeUndefined();
  });

  it('records who asked: requestedBy when given, otherwise the source', async () => {
    const { gate, gateDeps } = await freshGate();
    await handleGateEvent(parseGateEvent({ gate, action: 'close', reason: 'from the console' }), gateDeps);
    expect((await listGateAudit(gateDeps.db, gate))[0]).toMatchObject({
      requestedBy: 'unknown (console)',
      source: 'console',
      reason: 'from the console',
    });
  });
});

describe('bad gate requests are refused and write nothing', () => {
  it.each([
    [{ action: 'open' }, /"gate" is missing/],
    [{ gate: 'GATE', action: 'unlock' }, /"action" must be "open", "close" or "status", not "unlock"/],
    [{ gate: 'GATE', action: 'open', window: '2 hours' }, /"window": "2 hours" is not a duration/],
    [
      { gate: 'GATE', action: 'open', window: '-1h' },
      /"window": "-1h" is not a duration: it must not be negative/,
    ],
    [{ gate: 'GATE', action: 'open', duration: '1h' }, /unknown field\(s\) "duration"/],
    [
      { gate: 'GATE', action: 'close', source: 'schedule', requestedAt: 'yesterday' },
      /"requestedAt": "yesterday" is not an ISO 8601 time/,
    ],
    [
      { gate: 'GATE', action: 'open', requestedAt: '2026-06-01T11:00:00Z' },
      /"requestedAt" is set by the gate function's clock; only schedules send it/,
    ],
    [
      { gate: 'GATE', action: 'close', window: '367d' },
      /"window": 367d is longer than 366d \(a year\), the longest a request may last/,
    ],
    [{ gate: 'GATE', action: 'close', window: '99999999d' }, /"window": 99999999d is longer than 366d/],
    [
      { gate: 'GATE', action: 'open', revision: '1.3.0' },
      /"revision": "1.3.0" does not name a digest: use <tag>@sha256:<64 hex>/,
    ],
    [
      { gate: 'GATE', action: 'close', revision: `sha256:${'a'.repeat(64)}` },
      /"revision" names what an open request approves; it does not apply to "close"/,
    ],
    [
      { gate: 'GATE', action: 'open', source: 'slack' },
      /"source" must be one of schedule, console, cli, api, not "slack"/,
    ],
    [{ gate: 'GATE', action: 'open', reason: 42 }, /"reason" must be a string, not number/],
  ])('%j', async (event, message) => {
    const { gate, gateDeps } = await freshGate();
    const named = JSON.parse(JSON.stringify(event).replace('GATE', gate)) as unknown;
    await expect(async () => handleGateEvent(parseGateEvent(named), gateDeps)).rejects.toThrow(message);
    await expect(async () => handleGateEvent(parseGateEvent(named), gateDeps)).rejects.toThrow(
      GateEventError,
    );
    expect(await getGateRequest(gateDeps.db, gate)).toBeUndefined();
    expect(await listGateAudit(gateDeps.db, gate)).toEqual([]);
  });

  it('an unknown gate names the registered ones', async () => {
    const { gate, gateDeps } = await freshGate();
    await expect(
      handleGateEvent(request({ gate: 'no-such-gate', action: 'open' }), gateDeps),
    ).rejects.toThrow(new RegExp(`gate 'no-such-gate' is not registered \\(registered gates: .*${gate}`));
  });

  it('a schedule request from the future, or for a time its cron does not fire, changes nothing', async () => {
    const { gate, gateDeps } = await freshGate({
      default: 'open',
      schedules: [{ cron: '0 13 * * ? *', action: 'close', window: '1h' }],
    });
    const schedule = (requestedAt: string, action = 'close') =>
      handleGateEvent(parseGateEvent({ gate, action, source: 'schedule', requestedAt }), gateDeps);
    await expect(schedule('2026-06-01T13:00:00Z')).rejects.toThrow(
      /"requestedAt": 2026-06-01T13:00:00.000Z is in the future/,
    );
    await expect(schedule('2026-05-31T13:30:00Z')).rejects.toThrow(
      new RegExp(
        `2026-05-31T13:30:00.000Z is not a time any of gate '${gate}'s close schedules fires \\(close at "0 13 \\* \\* \\? \\*" \\(UTC\\)\\)`,
      ),
    );
    await expect(schedule('2026-05-31T13:00:00Z', 'open')).rejects.toThrow(
      /open schedules fires \(it has none\)/,
    );
    expect(await listGateAudit(gateDeps.db, gate)).toEqual([]);
    // A real firing is rebuilt from the spec: window, author and reason are the schedule's. It is
    // audited, not stored as the gate's request: the cron counts it, recorded or not.
    const fired = await schedule('2026-05-31T13:00:00Z');
    expect(fired.outcome).toBe('accepted');
    expect(await getGateRequest(gateDeps.db, gate)).toBeUndefined();
    expect((await listGateAudit(gateDeps.db, gate))[0]).toMatchObject({
      requestedAt: '2026-05-31T13:00:00.000Z',
      requestedBy: `schedule/${gate}/0`,
      windowMs: 3_600_000,
      source: 'schedule',
    });
  });
});
