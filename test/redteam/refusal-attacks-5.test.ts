// Red team 5: who can get a `refused` row into a gate's history through the console paths
// (a gate's approval runbook, the break-glass runbook), and can a refused execution be used again.
// Promise: a refusal after the execution is verified is one audited answer; a request that fails
// verification writes nothing; an execution id is taken once.
import { SendAutomationSignalCommand, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import type { OverrideResult } from '../../functions/core/break-glass/override-request.ts';
import { gateStatus, type GateDeps, type GateRequestResult } from '../../functions/core/gates/requests.ts';
import { listGateAudit, removeGate } from '../../functions/core/store/gates.ts';
import { getPendingApprovals } from '../../functions/core/store/gate-approvals.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { breakGlassRunbookContent } from '../../lib/break-glass-runbook.ts';
import type { AutomationDocument } from '../../dev/ssm-endpoint.ts';
import { engineDeps } from '../support/deliveries.ts';
import { manualClock, registerGate } from '../support/gates.ts';
import {
  ACCOUNT,
  ALICE,
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

const deps = engineDeps();
const clock = manualClock(new Date().toISOString());
const gates = {
  replay: uniqueName('replay'),
  regrant: uniqueName('regrant'),
  glass: uniqueName('glass'),
  removed: uniqueName('removed'),
  two: uniqueName('two'),
};
const grantees = new Map<string, string[]>([
  [`open_${gates.replay}`, [BOB.arn]],
  [`open_${gates.regrant}`, []],
  ['break_glass', []],
  [`open_${gates.removed}`, [BOB.arn]],
  [`open_${gates.two}`, [BOB.arn]],
]);
const gateDeps: GateDeps = { db: deps.db, clock, signers: { trustedAccounts: [ACCOUNT], grantees } };
const runbooks = new Map(
  [gates.replay, gates.regrant, gates.removed, gates.two].map((gate) => [gate, `sluice-${gate}-0123456789`]),
);
const BREAK_GLASS_DOC = `sluice-break-glass-${gates.glass}`;
const BREAK_GLASS_ARN = `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate:break_glass`;
/** Whoever may invoke any entry of the gate function (here: a grantee of closing the gate). */
const closeEntry = (gate: string) => ({
  invokedFunctionArn: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate:close_${gate}`,
});

let onInvoke: (name: string, payload: string) => Promise<unknown> = async () => {
  throw new Error('no invoke expected');
};
let standIn: SsmStandIn;
const client = (who: TestIdentity) => standIn.client(who);
const handler = gateHandler(
  () => gateDeps,
  () => ({
    runbooks,
    breakGlassRunbook: BREAK_GLASS_DOC,
    readAutomation: ssmAutomationReader(client(GATE_FUNCTION)),
  }),
);

beforeAll(async () => {
  const specs = { default: 'closed', window: '1h', requireVerified: true };
  const replay = await registerGate(deps, { name: gates.replay, ...specs });
  const regrant = await registerGate(deps, { name: gates.regrant, ...specs });
  await registerGate(deps, { name: gates.glass, ...specs });
  const removed = await registerGate(deps, { name: gates.removed, ...specs });
  const two = await registerGate(deps, { name: gates.two, ...specs, approvers: 2 });
  standIn = await startSsmStandIn({
    identities: [ALICE, BOB, REQUESTER, GATE_FUNCTION],
    documents: new Map([
      [runbooks.get(gates.replay)!, runbookDocument(replay, [BOB.arn])],
      [runbooks.get(gates.regrant)!, runbookDocument(regrant, [BOB.arn])],
      [runbooks.get(gates.removed)!, runbookDocument(removed, [BOB.arn])],
      [runbooks.get(gates.two)!, runbookDocument({ ...two, approvers: 1 }, [BOB.arn, ALICE.arn])],
      [
        BREAK_GLASS_DOC,
        breakGlassRunbookContent({
          functionArn: BREAK_GLASS_ARN,
          assumeRoleArn: `arn:aws:iam::${ACCOUNT}:role/sluice-automation`,
        }) as unknown as AutomationDocument,
      ],
    ]),
    invoke: (name, payload) => onInvoke(name, payload),
  });
});
afterAll(async () => {
  await standIn.close();
});

async function approvedExecution(gate: string, approver: TestIdentity = BOB): Promise<string> {
  const { AutomationExecutionId: id } = await client(REQUESTER).send(
    new StartAutomationExecutionCommand({
      DocumentName: runbooks.get(gate),
      Parameters: { window: ['1h'], reason: ['CHG-5'] },
    }),
  );
  await client(approver).send(
    new SendAutomationSignalCommand({ AutomationExecutionId: id, SignalType: 'Approve' }),
  );
  await standIn.ssm.settled(id!);
  return id!;
}

const rowsOf = async (gate: string, id: string) =>
  (await listGateAudit(deps.db, gate, 200)).filter((row) => row.reason.includes(id));

describe('console approval: one execution, one answer in the history', () => {
  it('a replay of a used execution id by another invoker writes no row naming the approvers', async () => {
    const gate = gates.replay;
    clock.set(new Date().toISOString());
    onInvoke = (name, payload) => handler(JSON.parse(payload) as object, { invokedFunctionArn: name });
    const id = await approvedExecution(gate);
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('open');
    expect(await rowsOf(gate, id)).toHaveLength(1);
    // Anyone who may invoke some other entry of the function is turned away at the door;
    for (let i = 0; i < 3; i++) {
      clock.advance(1_000);
      await expect(handler({ ssmExecution: id }, closeEntry(gate))).rejects.toThrow(
        /taken only through the gate function's runbooks entry.*nothing was recorded/,
      );
    }
    // and the runbooks' own entry, invoked again, answers that the id was used.
    for (let i = 0; i < 3; i++) {
      clock.advance(1_000);
      const answer = (await handler({ ssmExecution: id }, RUNBOOKS_ENTRY)) as GateRequestResult;
      expect(answer.outcome).toBe('refused');
      expect(answer.message).toMatch(/already used/);
    }
    const rows = await rowsOf(gate, id);
    expect(rows.map((row) => row.outcome)).toEqual(['accepted']);
  });

  it('an approval refused for an ungranted approver is not accepted when replayed after a grant', async () => {
    const gate = gates.regrant;
    clock.set(new Date().toISOString());
    onInvoke = (name, payload) => handler(JSON.parse(payload) as object, { invokedFunctionArn: name });
    const id = await approvedExecution(gate);
    const first = await rowsOf(gate, id);
    expect(first.map((row) => [row.outcome, row.requestedBy])).toEqual([['refused', BOB.arn]]);
    // Bob is granted afterwards; the refused execution is sent again within the hour.
    grantees.set(`open_${gate}`, [BOB.arn]);
    clock.advance(60_000);
    await expect(handler({ ssmExecution: id }, closeEntry(gate))).rejects.toThrow(/runbooks entry/);
    const again = (await handler({ ssmExecution: id }, RUNBOOKS_ENTRY)) as GateRequestResult;
    expect(again.outcome).toBe('refused');
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('closed');
    expect(await rowsOf(gate, id)).toHaveLength(1);
  });
});

describe('break-glass runbook: a refused execution answers once', () => {
  it('invoking the running execution again while its step runs writes no second refused row', async () => {
    const gate = gates.glass;
    clock.set(new Date().toISOString());
    const answers: OverrideResult[] = [];
    onInvoke = async (_name, payload) => {
      const event = JSON.parse(payload) as object;
      const context = { invokedFunctionArn: BREAK_GLASS_ARN };
      answers.push((await handler(event, context)) as OverrideResult);
      // A break_glass invoker sends the same id while the step is still running.
      answers.push((await handler(event, context)) as OverrideResult);
      return answers[0];
    };
    const { AutomationExecutionId: id } = await client(REQUESTER).send(
      new StartAutomationExecutionCommand({
        DocumentName: BREAK_GLASS_DOC,
        Parameters: {
          revision: [`1.0.0@sha256:${'a'.repeat(64)}`],
          window: ['1h'],
          reason: ['INC-5'],
          gates: [gate],
        },
      }),
    );
    await standIn.ssm.settled(id!);
    expect(answers.map((answer) => answer.outcome)).toEqual(['refused', 'refused']);
    const rows = await rowsOf(gate, id!);
    expect(rows.map((row) => [row.action, row.outcome, row.requestedBy])).toEqual([
      ['override', 'refused', REQUESTER.arn],
    ]);
  });
});

describe('refused rows: where they may be written, and what reads them', () => {
  it('an approval for a gate the runbook map names but the table no longer registers writes no row', async () => {
    const gate = gates.removed;
    clock.set(new Date().toISOString());
    await removeGate(deps.db, gate);
    let answer: unknown;
    onInvoke = async (name, payload) => {
      answer = await handler(JSON.parse(payload) as object, { invokedFunctionArn: name }).catch(
        (error: Error) => error,
      );
      if (answer instanceof Error) throw answer;
      return answer;
    };
    await approvedExecution(gate);
    expect(answer).toBeInstanceOf(Error);
    expect((answer as Error).message).toMatch(new RegExp(`gate '${gate}' is not registered`));
    expect(await listGateAudit(deps.db, gate, 200)).toEqual([]);
  });

  it('held: a refused approval (an ungranted approver) does not count toward a two-person gate', async () => {
    const gate = gates.two;
    clock.set(new Date().toISOString());
    onInvoke = (name, payload) => handler(JSON.parse(payload) as object, { invokedFunctionArn: name });
    // Alice is listed in the runbook but not granted open_<gate>: her approval is refused.
    const refused = await approvedExecution(gate, ALICE);
    expect((await rowsOf(gate, refused)).map((row) => [row.outcome, row.requestedBy])).toEqual([
      ['refused', ALICE.arn],
    ]);
    // Bob (granted) approves: one approval of two, the gate stays closed.
    clock.advance(1_000);
    await approvedExecution(gate, BOB);
    const pending = await getPendingApprovals(deps.db, gate, clock.now(), -Infinity);
    expect(pending?.approvals.map((approval) => approval.principal)).toEqual([BOB.arn]);
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('closed');
  });

  it('held: a refused break-glass row is no override in force', async () => {
    expect(await activeOverrides(deps.db, gates.glass, clock.now())).toEqual([]);
  });

  it('held: a gate runbook execution sent to the break_glass entry is refused and writes nothing', async () => {
    const gate = gates.replay;
    clock.set(new Date().toISOString());
    onInvoke = async () => ({ outcome: 'refused' });
    const before = (await listGateAudit(deps.db, gate, 200)).length;
    const id = await approvedExecution(gate);
    await expect(handler({ ssmExecution: id }, { invokedFunctionArn: BREAK_GLASS_ARN })).rejects.toThrow(
      /not this function's break-glass runbook/,
    );
    expect(await listGateAudit(deps.db, gate, 200)).toHaveLength(before);
  });
});
