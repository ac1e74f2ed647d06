// Red team 5: who can get a `refused` row into a gate's history through the console paths
// (a gate's approval runbook, the break-glass runbook), and can a refused execution be used again.
// Promise: a refusal after the execution is verified is one audited answer; a request that fails
// verification writes nothing; an execution id is taken once.
import { SendAutomationSignalCommand, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import type { OverrideResult } from '../../functions/core/gates/override-request.ts';
import { gateStatus, type GateDeps, type GateRequestResult } from '../../functions/core/gates/requests.ts';
import { listGateAudit } from '../../functions/core/store/gates.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { breakGlassRunbookContent } from '../../lib/break-glass-runbook.ts';
import type { AutomationDocument } from '../../dev/ssm-endpoint.ts';
import { engineDeps } from '../support/deliveries.ts';
import { manualClock, registerGate } from '../support/gates.ts';
import {
  ACCOUNT,
  BOB,
  GATE_FUNCTION,
  REQUESTER,
  runbookDocument,
  startSsmStandIn,
  type SsmStandIn,
} from '../support/ssm-stand-in.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();

const deps = engineDeps();
const clock = manualClock(new Date().toISOString());
const gates = { replay: uniqueName('replay'), regrant: uniqueName('regrant'), glass: uniqueName('glass') };
const grantees = new Map<string, string[]>([
  [`open_${gates.replay}`, [BOB.arn]],
  [`open_${gates.regrant}`, []],
  ['break_glass', []],
]);
const gateDeps: GateDeps = { db: deps.db, clock, signers: { trustedAccounts: [ACCOUNT], grantees } };
const runbooks = new Map([gates.replay, gates.regrant].map((gate) => [gate, `sluice-${gate}-0123456789`]));
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
  standIn = await startSsmStandIn({
    identities: [BOB, REQUESTER, GATE_FUNCTION],
    documents: new Map([
      [runbooks.get(gates.replay)!, runbookDocument(replay, [BOB.arn])],
      [runbooks.get(gates.regrant)!, runbookDocument(regrant, [BOB.arn])],
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

async function approvedExecution(gate: string): Promise<string> {
  const { AutomationExecutionId: id } = await client(REQUESTER).send(
    new StartAutomationExecutionCommand({
      DocumentName: runbooks.get(gate),
      Parameters: { window: ['1h'], reason: ['CHG-5'] },
    }),
  );
  await client(BOB).send(
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
    onInvoke = (_name, payload) => handler(JSON.parse(payload) as object);
    const id = await approvedExecution(gate);
    expect((await gateStatus(gate, gateDeps)).status.state).toBe('open');
    expect(await rowsOf(gate, id)).toHaveLength(1);
    // Anyone who may invoke some entry of the function sends the id again, over and over.
    for (let i = 0; i < 3; i++) {
      clock.advance(1_000);
      const answer = (await handler({ ssmExecution: id }, closeEntry(gate))) as GateRequestResult;
      expect(answer.outcome).toBe('refused');
      expect(answer.message).toMatch(/already used/);
    }
    const rows = await rowsOf(gate, id);
    expect(rows.map((row) => row.outcome)).toEqual(['accepted']);
  });

  it('an approval refused for an ungranted approver is not accepted when replayed after a grant', async () => {
    const gate = gates.regrant;
    clock.set(new Date().toISOString());
    onInvoke = (_name, payload) => handler(JSON.parse(payload) as object);
    const id = await approvedExecution(gate);
    const first = await rowsOf(gate, id);
    expect(first.map((row) => [row.outcome, row.requestedBy])).toEqual([['refused', BOB.arn]]);
    // Bob is granted afterwards; the refused execution is sent again within the hour.
    grantees.set(`open_${gate}`, [BOB.arn]);
    clock.advance(60_000);
    const again = (await handler({ ssmExecution: id }, closeEntry(gate))) as GateRequestResult;
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
