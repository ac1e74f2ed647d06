// Approvals and closes (DynamoDB Local), as the second red team attacked them: an approval given
// before a freeze does not help open the gate during it, whether the freeze came from a schedule
// or a close request that landed while approvals were gathering; an opened gate stays open only
// as long as every approver agreed to; a close that arrives late still holds once the request that
// outranks it ends; and approvals stored before approver keys still count by key.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { recordGateRequest, type GateRequest } from '../../../functions/core/store/gates.ts';
import { gateKey } from '../../../functions/core/store/table-client.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

const HOUR = 3_600_000;
const ALICE = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/alice';
const BOB = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/bob';
const MALLORY = 'arn:aws:sts::123456789012:assumed-role/Approver/mallory';
const MALLORY_AS_BOB = 'arn:aws:sts::123456789012:assumed-role/Approver/mallory-as-bob';

/** A two-person gate (closed by default, as two-person gates must be) with a No-Deploy-Friday close. */
async function twoPersonFreezeGate(start: string) {
  const clock = manualClock(start);
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('approve');
  await registerGate(deps, {
    name: gate,
    default: 'closed',
    window: '8h',
    approvers: 2,
    schedules: [{ cron: '0 0 ? * FRI *', timeZone: 'UTC', action: 'close', window: '24h' }],
  });
  const gateDeps = inProcessGateDeps(deps);
  const signed = (principal: string, fields: Record<string, unknown> = {}) =>
    handleGateEvent(parseGateEvent({ gate, action: 'open', ...fields }, { signed: true }), gateDeps, {
      principal,
      verified: true,
    });
  const state = async () => (await gateStatus(gate, gateDeps)).status;
  return { clock, deps, gate, gateDeps, signed, state };
}

/** A gate open by default, that anyone may request. */
async function openByDefaultGate(start: string) {
  const clock = manualClock(start);
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('late');
  await registerGate(deps, { name: gate, default: 'open', window: '1h' });
  const state = async () => (await gateStatus(gate, inProcessGateDeps(deps))).status;
  return { clock, deps, gate, state };
}

const THURSDAY_18 = '2026-11-26T18:00:00Z';
const FRIDAY_10 = '2026-11-27T10:00:00Z';

describe('an approval given before a close does not count after it', () => {
  it("a schedule's freeze between two approvals: the second one waits for another", async () => {
    const { clock, gate, gateDeps, signed, state } = await twoPersonFreezeGate(THURSDAY_18);
    expect(await signed(ALICE)).toMatchObject({ outcome: 'pending' });
    clock.set(FRIDAY_10); // the freeze began at Friday 00:00, after Alice's approval
    expect((await gateStatus(gate, gateDeps)).pendingApprovals).toBeUndefined();
    const bob = await signed(BOB);
    expect(bob).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(bob.pendingApprovals?.approvals.map((a) => a.principal)).toEqual([BOB]);
    clock.advance(60_000);
    expect(await signed(ALICE)).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect((await state()).lastRequest?.approvedBy).toEqual([BOB, ALICE]);
  });

  it('a close recorded while approvals gather (before they are cleared) drops the earlier ones', async () => {
    const { clock, deps, gate, signed } = await twoPersonFreezeGate(FRIDAY_10);
    expect(await signed(ALICE)).toMatchObject({ outcome: 'pending' });
    clock.advance(60_000);
    // What a close request stores, without the clearing of approvals that follows it: the moment
    // between the two, when another approval may arrive.
    const close: GateRequest = {
      action: 'close',
      requestedAt: clock.now().toISOString(),
      requestedBy: 'ops',
      reason: 'incident',
      source: 'cli',
      windowMs: 4 * HOUR,
    };
    expect(await recordGateRequest(deps.db, gate, close, clock.now())).toBe('accepted');
    clock.advance(60_000);
    const bob = await signed(BOB);
    expect(bob).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(bob.pendingApprovals?.approvals.map((a) => a.principal)).toEqual([BOB]);
  });
});

describe('an approved opening lasts the shortest window any approver asked for', () => {
  it.each([
    ['the first asked for less', '1h', '8h'],
    ['the last asked for less', '8h', '1h'],
  ])('%s: open for 1 hour', async (_, first, second) => {
    const { clock, signed, state } = await twoPersonFreezeGate(FRIDAY_10);
    await signed(ALICE, { window: first });
    clock.advance(60_000);
    const opened = await signed(BOB, { window: second });
    expect(opened).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect(opened.status.lastRequest?.windowMs).toBe(HOUR);
    clock.advance(HOUR + 1);
    expect(await state()).toMatchObject({ state: 'closed' });
  });
});

describe('a close that arrives after a later request is carried, not dropped', () => {
  it('it holds the gate once the later open request ends', async () => {
    const { clock, deps, gate, state } = await openByDefaultGate('2026-11-24T10:00:00Z');
    const at = (offset: number) => new Date(clock.now().getTime() + offset).toISOString();
    const open: GateRequest = {
      action: 'open',
      requestedAt: at(0),
      requestedBy: BOB,
      reason: 'exception',
      source: 'url',
      verified: true,
      windowMs: HOUR,
      approvedBy: [ALICE, BOB],
    };
    expect(await recordGateRequest(deps.db, gate, open, clock.now())).toBe('accepted');
    // Another Lambda instance's clock is a second behind: its close is older than the open.
    const close: GateRequest = {
      action: 'close',
      requestedAt: at(-1_000),
      requestedBy: 'ops',
      reason: 'incident',
      source: 'cli',
      windowMs: 4 * HOUR,
    };
    expect(await recordGateRequest(deps.db, gate, close, clock.now())).toBe('accepted');
    expect(await state()).toMatchObject({ state: 'open', lastRequest: { requestedBy: BOB } });
    clock.advance(HOUR + 1);
    expect(await state()).toMatchObject({ state: 'closed', lastRequest: { requestedBy: 'ops' } });
    clock.advance(3 * HOUR); // 14:00: the close has ended
    expect(await state()).toMatchObject({ state: 'open', byRequest: false });
  });

  it('a close made at the same instant as the stored open closes the gate at once', async () => {
    const { clock, deps, gate, state } = await openByDefaultGate('2026-11-24T10:00:00Z');
    const now = clock.now().toISOString();
    const base = { requestedAt: now, reason: 'r', windowMs: HOUR } as const;
    await recordGateRequest(
      deps.db,
      gate,
      { ...base, action: 'open', requestedBy: BOB, source: 'url', verified: true },
      clock.now(),
    );
    await recordGateRequest(
      deps.db,
      gate,
      { ...base, action: 'close', requestedBy: 'ops', source: 'cli' },
      clock.now(),
    );
    expect(await state()).toMatchObject({ state: 'closed' });
  });

  it('a late close that a stored close outlasts changes nothing and is recorded as stale', async () => {
    const { clock, deps, gate } = await openByDefaultGate('2026-11-24T10:00:00Z');
    const now = clock.now().getTime();
    const close = (offset: number, windowMs: number): GateRequest => ({
      action: 'close',
      requestedAt: new Date(now + offset).toISOString(),
      requestedBy: 'ops',
      reason: 'r',
      source: 'cli',
      windowMs,
    });
    expect(await recordGateRequest(deps.db, gate, close(0, 4 * HOUR), clock.now())).toBe('accepted');
    expect(await recordGateRequest(deps.db, gate, close(-1_000, HOUR), clock.now())).toBe('stale');
  });
});

describe('approvals stored before approver keys', () => {
  it('count by the key of their principal: another session of the same role is the same approver', async () => {
    const { clock, deps, gate, signed } = await twoPersonFreezeGate(FRIDAY_10);
    await deps.db.doc.send(
      new PutCommand({
        TableName: deps.db.table,
        Item: {
          pk: gateKey(gate),
          sk: 'approvals',
          version: 1,
          pending: {
            approvals: [{ principal: MALLORY, at: clock.now().toISOString() }],
            expiresAt: new Date(clock.now().getTime() + 24 * HOUR).toISOString(),
          },
        },
      }),
    );
    clock.advance(60_000);
    const again = await signed(MALLORY_AS_BOB);
    expect(again).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(again.pendingApprovals?.approvals.map((a) => a.principal)).toEqual([MALLORY]);
  });
});
