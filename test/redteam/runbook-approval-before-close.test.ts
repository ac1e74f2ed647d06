// Red team: a console (runbook) approval is timed by when its execution id reaches the gate
// function, not by when the approver decided. An approval given before the gate's last close
// therefore still opens it afterwards (promise: "approvals made before the last close do not
// count"), both when the close lands between the approve step and the invoke step, and when an
// execution whose invoke step failed is replayed within the hour after an incident close.
import { SendAutomationSignalCommand, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import {
  gateStatus,
  handleGateEvent,
  type GateDeps,
  type GateRequestResult,
} from '../../functions/core/gates/requests.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { engineDeps } from '../support/deliveries.ts';
import { manualClock, registerGate } from '../support/gates.ts';
import {
  ACCOUNT,
  BOB,
  GATE_FUNCTION,
  REQUESTER,
  runbookDocument,
  RUNBOOKS_ENTRY,
  startSsmStandIn,
  type SsmStandIn,
} from '../support/ssm-stand-in.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();

const ALICE_ARN = `arn:aws:iam::${ACCOUNT}:user/alice`;
const CAROL_ARN = `arn:aws:iam::${ACCOUNT}:user/carol`;

const deps = engineDeps();
const clock = manualClock(new Date().toISOString());
const gates = { race: uniqueName('race'), replay: uniqueName('replay') };
// Bob is granted opening both gates, so what refuses his approvals is the close, not his grant.
const gateDeps: GateDeps = {
  db: deps.db,
  clock,
  signers: {
    trustedAccounts: [ACCOUNT],
    grantees: new Map(Object.values(gates).map((gate) => [`open_${gate}`, [BOB.arn]])),
  },
};
const runbooks = new Map(Object.values(gates).map((gate) => [gate, `sluice-${gate}-0123456789`]));
/** What the invoke step does, per test: by default the function is throttled and never runs. */
let onInvoke: (payload: string) => Promise<GateRequestResult> = async () => {
  throw new Error('Rate exceeded (TooManyRequestsException)');
};
let standIn: SsmStandIn;

const client = (who: TestIdentity) => standIn.client(who);
const handler = gateHandler(
  () => gateDeps,
  () => ({ runbooks, readAutomation: ssmAutomationReader(client(GATE_FUNCTION)) }),
);

/** A request whose author STS verified (what handleProvenRequest passes on after checking the proof). */
const verified = (
  gate: string,
  action: 'open' | 'close',
  principal: string,
  reason: string,
  windowMs?: number,
) =>
  handleGateEvent(
    { gate, action, source: 'url', reason, ...(windowMs !== undefined && { windowMs }) },
    gateDeps,
    { principal, verified: true },
  );

beforeAll(async () => {
  const specs: Record<string, unknown> = { default: 'closed', window: '1h', requireVerified: true };
  const race = await registerGate(deps, { name: gates.race, ...specs });
  const replay = await registerGate(deps, { name: gates.replay, ...specs });
  standIn = await startSsmStandIn({
    identities: [BOB, REQUESTER, GATE_FUNCTION],
    documents: new Map([
      [runbooks.get(gates.race)!, runbookDocument(race, [BOB.arn])],
      [runbooks.get(gates.replay)!, runbookDocument(replay, [BOB.arn])],
    ]),
    invoke: (_name, payload) => onInvoke(payload),
  });
});
afterAll(async () => {
  await standIn.close();
});

async function approvedExecution(gate: string): Promise<string> {
  const { AutomationExecutionId: id } = await client(REQUESTER).send(
    new StartAutomationExecutionCommand({
      DocumentName: runbooks.get(gate),
      Parameters: { window: ['1h'], reason: ['CHG-1'] },
    }),
  );
  await client(BOB).send(
    new SendAutomationSignalCommand({ AutomationExecutionId: id, SignalType: 'Approve' }),
  );
  await standIn.ssm.settled(id!);
  return id!;
}

describe('runbook approvals are timed by the invocation, not the decision', () => {
  it('an execution replayed after an incident close does not reopen the gate', async () => {
    const gate = gates.replay;
    clock.set(new Date().toISOString());
    // Alice (verified) opened the gate for 4h; Bob approved a runbook execution whose invoke
    // step was throttled, so its id was never used.
    await verified(gate, 'open', ALICE_ARN, 'CHG-0', 4 * 3_600_000);
    onInvoke = async () => {
      throw new Error('Rate exceeded (TooManyRequestsException)');
    };
    const id = await approvedExecution(gate);
    // Ten minutes later an incident: Carol (verified) closes the gate until further notice.
    clock.advance(10 * 60_000);
    await verified(gate, 'close', CAROL_ARN, 'incident 42');
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('closed');
    // Twenty minutes later someone sends the old execution id: Bob approved before the incident.
    clock.advance(10 * 60_000);
    const answer = (await handler({ ssmExecution: id }, RUNBOOKS_ENTRY)) as GateRequestResult;
    expect(answer).toMatchObject({ outcome: 'refused', status: { state: 'closed' } });
    expect(answer.message).toMatch(/before the gate was last closed/);
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('closed');
  });

  it('a close landing between the approve step and the invoke step holds', async () => {
    const gate = gates.race;
    clock.set(new Date().toISOString());
    // The invoke step reaches the gate function a moment after a verified close was made.
    let answer: GateRequestResult | undefined;
    onInvoke = async (payload) => {
      clock.advance(1_000);
      await verified(gate, 'close', CAROL_ARN, 'incident 43');
      clock.advance(1_000);
      answer = (await handler(JSON.parse(payload) as object, RUNBOOKS_ENTRY)) as GateRequestResult;
      return answer;
    };
    await approvedExecution(gate);
    expect(answer).toMatchObject({ outcome: 'refused', status: { state: 'closed' } });
    expect(answer?.message).toMatch(/before the gate was last closed/);
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('closed');
  });
});
