// A gate that needs N distinct verified approvers, on DynamoDB Local: approvals gather, count each
// principal once, lapse, are vetoed by a close, and concurrent ones are never lost.
import { describe, expect, it } from 'vitest';
import { GateEventError, parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { listGateAudit } from '../../../functions/core/store/gates.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

// People of an IAM Identity Center permission set: AWS sets their session names, so each counts.
const ALICE = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/alice';
const BOB = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/bob';
const CAROL = 'arn:aws:iam::123456789012:user/carol';
const REVISION = `1.3.0@sha256:${'c'.repeat(64)}`;

async function twoPersonGate(approvers = 2) {
  const clock = manualClock('2026-06-01T09:00:00Z');
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('two');
  await registerGate(deps, { name: gate, default: 'closed', window: '1h', approvers });
  const gateDeps = inProcessGateDeps(deps);
  const signed = (principal: string, fields: Record<string, unknown> = {}) =>
    handleGateEvent(parseGateEvent({ gate, action: 'open', ...fields }, { signed: true }), gateDeps, {
      principal,
      verified: true,
    });
  return { clock, deps, gate, gateDeps, signed };
}

describe('approvers: 2', () => {
  it('opens on the second distinct approver; the same one twice counts once', async () => {
    const { clock, deps, gate, gateDeps, signed } = await twoPersonGate();
    const first = await signed(ALICE, { reason: 'CHG-9' });
    expect(first).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(first.message).toContain(
      '1 of 2 approvals for any revision (by alice (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012))',
    );
    clock.advance(60_000);
    expect(await signed(ALICE)).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    clock.advance(60_000);
    const second = await signed(BOB);
    expect(second).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect(second.status.lastRequest).toMatchObject({
      approvedBy: [ALICE, BOB],
      verified: true,
      source: 'url',
    });
    expect(second.message).toContain(
      'open by alice (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012) and bob (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)',
    );
    expect((await listGateAudit(deps.db, gate)).map((r) => [r.requestedBy, r.outcome])).toEqual([
      [BOB, 'accepted'],
      [ALICE, 'pending'],
      [ALICE, 'pending'],
    ]);
    expect((await gateStatus(gate, gateDeps)).pendingApprovals).toBeUndefined();
  });

  it('approvals of different revisions do not add up', async () => {
    const { clock, signed } = await twoPersonGate();
    await signed(ALICE, { revision: REVISION });
    clock.advance(60_000);
    const other = await signed(BOB, { revision: `1.4.0@sha256:${'d'.repeat(64)}` });
    expect(other).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(other.pendingApprovals?.approvals.map((a) => a.principal)).toEqual([BOB]);
    clock.advance(60_000);
    const same = await signed(CAROL, { revision: `1.4.0@sha256:${'d'.repeat(64)}` });
    expect(same).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
  });

  it('approvals lapse after 24 hours, and a close vetoes them', async () => {
    const { clock, gate, gateDeps, signed } = await twoPersonGate();
    await signed(ALICE);
    clock.advance(24 * 3_600_000 + 1);
    expect(await signed(BOB)).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    clock.advance(60_000);
    await handleGateEvent(
      parseGateEvent({ gate, action: 'close', requestedBy: 'oncall', source: 'cli' }),
      gateDeps,
    );
    expect((await gateStatus(gate, gateDeps)).pendingApprovals).toBeUndefined();
    clock.advance(60_000);
    expect(await signed(CAROL)).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
  });

  it('refuses an unverified open request, naming why, and records nothing', async () => {
    const { deps, gate, gateDeps } = await twoPersonGate();
    const direct = handleGateEvent(
      parseGateEvent({ gate, action: 'open', requestedBy: 'alice', source: 'console' }),
      gateDeps,
    );
    await expect(direct).rejects.toThrow(GateEventError);
    await expect(
      handleGateEvent(
        parseGateEvent({ gate, action: 'open', requestedBy: 'alice', source: 'console' }),
        gateDeps,
      ),
    ).rejects.toThrow(
      `gate '${gate}' opens on 2 verified approvals; a request that reached the function directly (alice (unverified), source console) is not verified`,
    );
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it('three approvers at the same moment: the gate opens once, with all three, none lost', async () => {
    const { deps, gate, signed } = await twoPersonGate(3);
    const results = await Promise.all([ALICE, BOB, CAROL].map((principal) => signed(principal)));
    expect(results.map((r) => r.outcome).sort()).toEqual(['accepted', 'pending', 'pending']);
    const opened = results.find((r) => r.outcome === 'accepted')!;
    expect([...opened.status.lastRequest!.approvedBy!].sort()).toEqual([ALICE, BOB, CAROL].sort());
    expect((await listGateAudit(deps.db, gate)).map((r) => r.outcome).sort()).toEqual([
      'accepted',
      'pending',
      'pending',
    ]);
  });
});
