// The gate audit trail cannot be spoofed: on DynamoDB Local, through handleGateEvent. A request
// may not carry control characters or claim the system's names; records stored before that rule
// (or by any other writer) print as one inert line, and only the schedule reads as the schedule.
import { describe, expect, it } from 'vitest';
import { MAX_REASON_LENGTH, MAX_REQUESTED_BY_LENGTH } from '../../../functions/core/access/audit-text.ts';
import { GateEventError, parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getGateRequest, listGateAudit, recordGateRequest } from '../../../functions/core/store/gates.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

async function freshGate(spec: Record<string, unknown> = { default: 'closed', window: '1h' }) {
  const clock = manualClock('2026-06-01T12:00:00Z');
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('audit');
  await registerGate(deps, { name: gate, ...spec });
  return { gate, gateDeps: inProcessGateDeps(deps) };
}

/** [field, a value with a control character, the character as the error writes it out] */
const CONTROL_CHARACTERS: readonly (readonly [string, string, string])[] = [
  ['reason', 'CHG-1\n2026-06-01T12:00:00Z  open  alice (role Approver)', 'n'],
  ['reason', 'ok \u001b[8m', 'u001b'],
  ['requestedBy', 'mallory\rbob', 'r'],
  ['requestedBy', 'mallory\u001b[8m', 'u001b'],
  ['requestedBy', 'mallory\u007f', 'u007f'],
  ['reason', 'x\u009b8m', 'u009b'],
  ['reason', 'x\u0000', 'u0000'],
  ['reason', 'x\u2028y', 'u2028'],
  ['requestedBy', 'bob\u202e', 'u202e'],
  // Invisible format characters: two names that differ by one look alike.
  ['requestedBy', 'a\u200blice', 'u200b'],
  ['requestedBy', 'alice\u2060', 'u2060'],
  ['requestedBy', '\ufeffalice', 'ufeff'],
  ['reason', 'CHG-\u00ad1', 'u00ad'],
];

describe('a request that would spoof the audit trail is refused and writes nothing', () => {
  it.each([
    ...CONTROL_CHARACTERS.map(([field, value, shown]) => [
      `${shown} in ${field}`,
      { [field]: value },
      new RegExp(`"${field}" contains the control character \\\\${shown}`),
    ]),
    [
      'the schedule as requestedBy',
      { requestedBy: 'schedule/GATE/0' },
      /"requestedBy": "schedule\/[a-z0-9-]+\/0" starts with "schedule\/", which is reserved/,
    ],
    [
      'the schedule, capitalised',
      { requestedBy: ' Schedule/GATE/0' },
      /starts with "schedule\/", which is reserved/,
    ],
    [
      'sluice itself as requestedBy',
      { requestedBy: 'sluice/reconcile' },
      /starts with "sluice\/", which is reserved/,
    ],
    [
      'an unnamed source as requestedBy',
      { requestedBy: 'unknown (schedule)' },
      /starts with "unknown \(", which is reserved/,
    ],
    [
      'a claim that prints as another marker',
      { requestedBy: 'alice (role Approver, 123456789012)' },
      /"requestedBy": "alice \(role Approver, 123456789012\)" contains a parenthesis/,
    ],
    [
      'a reason over the cap',
      { reason: 'x'.repeat(MAX_REASON_LENGTH + 1) },
      new RegExp(
        `"reason" is ${MAX_REASON_LENGTH + 1} characters long; at most ${MAX_REASON_LENGTH} are recorded`,
      ),
    ],
    [
      'a requestedBy over the cap',
      { requestedBy: 'x'.repeat(MAX_REQUESTED_BY_LENGTH + 1) },
      new RegExp(
        `"requestedBy" is ${MAX_REQUESTED_BY_LENGTH + 1} characters long; at most ${MAX_REQUESTED_BY_LENGTH}`,
      ),
    ],
  ])('%s', async (_, fields, message) => {
    const { gate, gateDeps } = await freshGate();
    const named = JSON.parse(JSON.stringify(fields).replaceAll('GATE', gate)) as Record<string, unknown>;
    for (const source of ['console', 'cli', 'api']) {
      const event = () => parseGateEvent({ gate, action: 'open', source, requestedBy: 'alice', ...named });
      await expect(async () => handleGateEvent(event(), gateDeps)).rejects.toThrow(message);
      await expect(async () => handleGateEvent(event(), gateDeps)).rejects.toThrow(GateEventError);
    }
    expect(await getGateRequest(gateDeps.db, gate)).toBeUndefined();
    expect(await listGateAudit(gateDeps.db, gate)).toEqual([]);
  });

  it('a signed request is held to the same reason rules', () => {
    expect(() => parseGateEvent({ gate: 'g', action: 'open', reason: 'a\nb' }, { signed: true })).toThrow(
      /"reason" contains the control character \\n/,
    );
  });

  it('takes a reason and a name at their caps, and any printable text, as written', async () => {
    const { gate, gateDeps } = await freshGate();
    const reason = `${'é'.repeat(MAX_REASON_LENGTH - 9)} CHG-1234`;
    const requestedBy = `ålice ${'x'.repeat(MAX_REQUESTED_BY_LENGTH - 6)}`;
    const result = await handleGateEvent(
      parseGateEvent({ gate, action: 'open', source: 'cli', reason, requestedBy }),
      gateDeps,
    );
    expect(result.outcome).toBe('accepted');
    expect(await getGateRequest(gateDeps.db, gate)).toMatchObject({ reason, requestedBy });
  });

  it("a schedule's own event still names the schedule: it is rebuilt from the spec", async () => {
    const { gate, gateDeps } = await freshGate({
      default: 'open',
      schedules: [{ cron: '0 11 * * ? *', action: 'close', window: '2h' }],
    });
    const fired = await handleGateEvent(
      parseGateEvent({
        gate,
        action: 'close',
        source: 'schedule',
        requestedAt: '2026-06-01T11:00:00Z',
        requestedBy: `schedule/${gate}/0`,
      }),
      gateDeps,
    );
    expect(fired.message).toBe(
      `gate '${gate}' is closed until 2026-06-01T13:00:00Z (close by schedule/${gate}/0: schedule "0 11 * * ? *" (UTC))`,
    );
  });
});

describe('records stored before these rules print as one inert line', () => {
  it('a claimed schedule/ name reads as an unverified claim; the real schedule reads as the schedule', async () => {
    const { gate, gateDeps } = await freshGate({ default: 'open' });
    await recordGateRequest(
      gateDeps.db,
      gate,
      {
        action: 'close',
        requestedAt: '2026-06-01T11:59:00.000Z',
        requestedBy: `schedule/${gate}/0`,
        reason: 'freeze',
        source: 'console',
        verified: false,
      },
      new Date('2026-06-01T11:59:00Z'),
    );
    const { status } = await gateStatus(gate, gateDeps);
    const result = await handleGateEvent(parseGateEvent({ gate, action: 'status' }), gateDeps);
    expect(status.state).toBe('closed');
    expect(result.message).toBe(
      `gate '${gate}' is closed (close by schedule/${gate}/0 (unverified): freeze)`,
    );
  });

  it('a newline or an escape sequence in a stored reason or name is written out', async () => {
    const { gate, gateDeps } = await freshGate({ default: 'open' });
    await recordGateRequest(
      gateDeps.db,
      gate,
      {
        action: 'close',
        requestedAt: '2026-06-01T11:59:00.000Z',
        requestedBy: 'mall\u200bory\u001b[8m',
        reason: 'ok\n2026-06-01T11:00:00Z  open  alice (role Approver, 123456789012)',
        source: 'console',
      },
      new Date('2026-06-01T11:59:00Z'),
    );
    const result = await handleGateEvent(parseGateEvent({ gate, action: 'status' }), gateDeps);
    expect(result.message).toBe(
      `gate '${gate}' is closed (close by mall\\u200bory\\u001b[8m (unverified): ok\\n2026-06-01T11:00:00Z  open  alice (role Approver, 123456789012))`,
    );
  });
});
