// Approving in the AWS console: a gate's Systems Manager runbook against the SSM stand-in (which
// verifies SigV4 and who may approve) and the gate handler on DynamoDB Local. The gate function
// trusts nothing from an invocation but the execution id, and reads the rest from the record.
import {
  GetAutomationExecutionCommand,
  SendAutomationSignalCommand,
  StartAutomationExecutionCommand,
} from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomationDocument } from '../../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../../functions/core/aws/ssm-automation.ts';
import type { Gate } from '../../../functions/core/config/index.ts';
import type { GateRequestResult } from '../../../functions/core/gates/requests.ts';
import { RUNBOOK_STEPS } from '../../../functions/core/approvals/runbook-approval.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateHandler, handler as deployedHandler } from '../../../functions/gate/handler.ts';
import { engineDeps, registerDelivery } from '../../support/deliveries.ts';
import { inProcessGateDeps, registerGate } from '../../support/gates.ts';
import {
  ACCOUNT,
  ALICE,
  BOB,
  FUNCTION_ARN,
  RUNBOOKS_ENTRY,
  GATE_FUNCTION,
  identity,
  REQUESTER,
  runbookDocument,
  startSsmStandIn,
  type SsmStandIn,
} from '../../support/ssm-stand-in.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

const MALLORY = identity('mallory', `arn:aws:iam::${ACCOUNT}:user/mallory`);
/** The credentials the test environment gives the SDK (componentsEnv): the handler as deployed signs with them. */
const LOCAL: TestIdentity = {
  accessKeyId: 'local',
  secretAccessKey: 'local',
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/sluice-gate/local`,
};

const deps = engineDeps();
const gateDeps = inProcessGateDeps(deps);
const gates = {
  two: uniqueName('two'),
  one: uniqueName('one'),
  strict: uniqueName('strict'),
  named: uniqueName('named'),
  frozen: uniqueName('frozen'),
  pinned: uniqueName('pinned'),
};
/** The function's own runbooks, as the construct names them in SLUICE_GATE_RUNBOOKS. */
const runbooks = new Map(Object.values(gates).map((gate) => [gate, `sluice-${gate}-0123456789`]));
const invocations: { payload: string; result?: GateRequestResult; error?: string }[] = [];
let standIn: SsmStandIn;

const client = (who: TestIdentity) => standIn.client(who);
const handler = gateHandler(
  () => gateDeps,
  () => ({ runbooks, readAutomation: ssmAutomationReader(client(GATE_FUNCTION)) }),
);
const invoke = (event: object) => handler(event) as Promise<GateRequestResult>;
/** The runbook's invoke step, as Lambda hands it to the function: through the runbooks entry. */
const fromRunbook = (event: object) => handler(event, RUNBOOKS_ENTRY) as Promise<GateRequestResult>;

const document = (gate: Gate, approvers: string[]) =>
  runbookDocument(gate, approvers, `arn:aws:sns:us-east-1:${ACCOUNT}:approvals`);

beforeAll(async () => {
  const two = await registerGate(deps, { name: gates.two, default: 'closed', window: '1h', approvers: 2 });
  const one = await registerGate(deps, { name: gates.one, default: 'closed', window: '1h' });
  const strict = await registerGate(deps, {
    name: gates.strict,
    default: 'closed',
    window: '1h',
    requireVerified: true,
    schedules: [{ cron: '0 9 * * ? *', action: 'close' }],
  });
  const named = await registerGate(deps, { name: gates.named, default: 'closed', window: '1h' });
  const frozen = await registerGate(deps, { name: gates.frozen, default: 'closed', window: '1h' });
  const pinned = await registerGate(deps, {
    name: gates.pinned,
    default: 'closed',
    window: '1h',
    approval: 'revision',
  });
  const documents = new Map<string, AutomationDocument>([
    [runbooks.get(gates.named)!, document(named, [ALICE.arn])],
    [runbooks.get(gates.frozen)!, document(frozen, [ALICE.arn])],
    [runbooks.get(gates.pinned)!, document(pinned, [ALICE.arn])],
    [runbooks.get(gates.two)!, document(two, [ALICE.arn, BOB.arn])],
    [runbooks.get(gates.one)!, document(one, [ALICE.arn])],
    [runbooks.get(gates.strict)!, document(strict, [ALICE.arn])],
    // A runbook someone else made, naming themselves as approver and invoking the gate function.
    ['mallorys-own-runbook', document({ ...one, approvers: 1 }, [MALLORY.arn])],
  ]);
  standIn = await startSsmStandIn({
    identities: [ALICE, BOB, MALLORY, REQUESTER, GATE_FUNCTION, LOCAL],
    documents,
    invoke: (functionName, payload) => {
      expect(functionName).toBe(FUNCTION_ARN);
      const entry: (typeof invocations)[number] = { payload };
      invocations.push(entry);
      return (async () => fromRunbook(JSON.parse(payload) as object))().then(
        (result) => (entry.result = result),
        (error: unknown) => {
          entry.error = (error as Error).message;
          throw error;
        },
      );
    },
  });
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_SSM;
  delete process.env.SLUICE_GATE_RUNBOOKS;
  await standIn.close();
});

async function start(gate: string, parameters: Record<string, string[]>, as = REQUESTER): Promise<string> {
  const name = runbooks.get(gate) ?? gate;
  const { AutomationExecutionId } = await client(as).send(
    new StartAutomationExecutionCommand({ DocumentName: name, Parameters: parameters }),
  );
  return AutomationExecutionId!;
}
const signal = (who: TestIdentity, id: string, type: 'Approve' | 'Reject') =>
  client(who).send(
    new SendAutomationSignalCommand({
      AutomationExecutionId: id,
      SignalType: type,
      Payload: { Comment: [`${type} by ${who.arn}`] },
    }),
  );
const invocationOf = (id: string) => invocations.find((i) => i.payload.includes(id));

describe('a runbook validates its request before anyone is asked to approve', () => {
  const DIGEST = `sha256:${'7'.repeat(64)}`;
  const refused = (gate: string, parameters: Record<string, string[]>) =>
    expect(start(gate, parameters)).rejects.toThrow(/does not match allowed pattern|is required/);

  it('a gate that pins a revision refuses a blank or tag-only revision at the start; a digest starts it', async () => {
    await refused(gates.pinned, {});
    await refused(gates.pinned, { revision: [''] });
    await refused(gates.pinned, { revision: ['v1.2.0'] });
    await refused(gates.pinned, { revision: ['v1.2.0@sha256:abc'] });
    expect(await start(gates.pinned, { revision: [`v1.2.0@${DIGEST}`], reason: ['CHG-9'] })).toMatch(/./);
  });

  it('any gate refuses a tag without its digest, a malformed window or delivery name; blanks are fine', async () => {
    await refused(gates.one, { revision: ['latest'] });
    await refused(gates.one, { window: ['an hour'] });
    await refused(gates.one, { deliveries: ['Shop_Web'] });
    await start(gates.one, { revision: [''], window: [''], deliveries: [] });
    await start(gates.one, { revision: [DIGEST], window: ['1h30m'], deliveries: ['shop-web'] });
    expect(await listGateAudit(deps.db, gates.one)).toEqual([]);
  });
});

describe('approving in the console (Systems Manager runbook)', () => {
  it('a two-approver runbook opens the gate with both approvers recorded as verified', async () => {
    const id = await start(gates.two, { window: ['30m'], reason: ['CHG-7'] });
    await signal(ALICE, id, 'Approve');
    await signal(BOB, id, 'Approve');
    await standIn.ssm.settled(id);
    expect(invocationOf(id)?.error).toBeUndefined();
    const request = await getGateRequest(deps.db, gates.two);
    expect(request).toMatchObject({
      action: 'open',
      verified: true,
      source: 'runbook',
      windowMs: 30 * 60_000,
      approvedBy: [ALICE.arn, BOB.arn],
      reason: `CHG-7 [runbook ${id}]`,
    });
    expect(invocationOf(id)?.result?.status.state).toBe('open');

    // The same execution id sent again (after a close) is a replay: it opens nothing, and is
    // answered (not thrown) as refused; it writes no row (the execution's answer is in the history,
    // and a replay's row would name the approvers for whoever sent it).
    await invoke({ gate: gates.two, action: 'close', requestedBy: 'oncall', source: 'cli' });
    const audit = await listGateAudit(deps.db, gates.two);
    const replay = await fromRunbook({ ssmExecution: id });
    expect(replay).toMatchObject({ outcome: 'refused', status: { state: 'closed' } });
    expect(replay.message).toMatch(/already used .*a replay changes nothing/);
    const after = await listGateAudit(deps.db, gates.two);
    expect(after).toHaveLength(audit.length);
    expect((await getGateRequest(deps.db, gates.two))?.action).toBe('close');
  });

  it('the runbook names the deliveries an approval is for, and the gate opens for those only', async () => {
    const delivery = uniqueName('web');
    await registerDelivery(deps, bed, {
      name: delivery,
      repository: uniqueName('web/app'),
      tag: 'release',
      gates: [{ name: gates.named, blocks: 'all' }],
    });
    const id = await start(gates.named, { reason: ['CHG-9'], deliveries: [delivery] });
    await signal(ALICE, id, 'Approve');
    await standIn.ssm.settled(id);
    expect(invocationOf(id)?.error).toBeUndefined();
    expect(await getGateRequest(deps.db, gates.named)).toMatchObject({
      deliveries: [delivery],
      source: 'runbook',
    });
    expect(invocationOf(id)?.result?.status).toMatchObject({ state: 'open', deliveries: [delivery] });
  });

  it('a runbook that asked for approval before the gate was last closed opens nothing after that close', async () => {
    const id = await start(gates.frozen, { reason: ['CHG-10'] });
    await invoke({
      gate: gates.frozen,
      action: 'close',
      requestedBy: 'oncall',
      source: 'cli',
      reason: 'incident',
    });
    await signal(ALICE, id, 'Approve');
    await standIn.ssm.settled(id);
    // A refusal of a verified approval is the function's answer, not a function error ...
    const why =
      /asked for approval at .*, before the gate was last closed .*: approvals given before a close do not open the gate after it; start the runbook again/;
    expect(invocationOf(id)?.error).toBeUndefined();
    const answer = invocationOf(id)?.result;
    expect(answer).toMatchObject({ gate: gates.frozen, action: 'open', outcome: 'refused' });
    expect(answer?.status.state).toBe('closed');
    expect(answer?.message).toContain(`Automation execution ${id} by ${ALICE.arn} was refused`);
    expect(answer?.message).toMatch(why);
    expect(await getGateRequest(deps.db, gates.frozen)).toMatchObject({
      action: 'close',
      requestedBy: 'oncall',
    });
    // ... written to the gate's audit trail with why ...
    const refusedRow = (await listGateAudit(deps.db, gates.frozen)).find((r) => r.outcome === 'refused');
    expect(refusedRow).toMatchObject({
      action: 'open',
      requestedBy: ALICE.arn,
      source: 'runbook',
      verified: true,
      reason: `CHG-10 [runbook ${id}]`,
    });
    expect(refusedRow?.refusedBecause).toMatch(why);
    // ... and the runbook still fails the execution on it, in its refusal step, with the answer.
    const { AutomationExecution: record } = await client(REQUESTER).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: id }),
    );
    expect(record?.AutomationExecutionStatus).toBe('Failed');
    const steps = new Map(record?.StepExecutions?.map((s) => [s.StepName, s]));
    expect(steps.get(RUNBOOK_STEPS.openGate)?.StepStatus).toBe('Success');
    expect(steps.get(RUNBOOK_STEPS.checkOutcome)?.StepStatus).toBe('Success');
    expect(steps.get(RUNBOOK_STEPS.refused)?.StepStatus).toBe('Failed');
    expect(steps.get(RUNBOOK_STEPS.refused)?.FailureMessage).toMatch(/^Exception: .*"outcome":"refused"/);
    expect(steps.get(RUNBOOK_STEPS.refused)?.FailureMessage).toMatch(why);
    // Started again after the close, it opens the gate.
    const again = await start(gates.frozen, { reason: ['CHG-10'] });
    await signal(ALICE, again, 'Approve');
    await standIn.ssm.settled(again);
    expect(invocationOf(again)?.result?.status.state).toBe('open');
    // An accepted answer ends the execution at the branch: its refusal step never runs.
    const { AutomationExecution: opened } = await client(REQUESTER).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: again }),
    );
    expect(opened?.AutomationExecutionStatus).toBe('Success');
    expect(opened?.StepExecutions?.find((s) => s.StepName === RUNBOOK_STEPS.refused)?.StepStatus).toBe(
      'Pending',
    );
  });

  it('only an approver the runbook lists can approve; one approval of two leaves the gate closed', async () => {
    const id = await start(gates.two, { reason: ['CHG-8'] });
    await expect(signal(MALLORY, id, 'Approve')).rejects.toThrow(/is not an approver of this step/);
    // Signing as alice takes alice's secret key: her access key id alone is refused.
    await expect(
      signal({ ...ALICE, secretAccessKey: MALLORY.secretAccessKey }, id, 'Approve'),
    ).rejects.toThrow(/signature we calculated does not match/);
    await signal(ALICE, id, 'Approve');
    await expect(signal(ALICE, id, 'Approve')).rejects.toThrow(/already signalled/);
    expect(invocationOf(id)).toBeUndefined();
    // Claiming the still pending execution gets nothing either.
    const before = await listGateAudit(deps.db, gates.two);
    await expect(fromRunbook({ ssmExecution: id })).rejects.toThrow(
      /approval of Automation execution .* is not given \(approve step Waiting, Waiting\)/,
    );
    expect(await listGateAudit(deps.db, gates.two)).toEqual(before);
  });

  it('a rejected runbook never invokes the function, and claiming its id changes nothing', async () => {
    const id = await start(gates.one, { reason: ['CHG-9'] });
    await signal(ALICE, id, 'Reject');
    await standIn.ssm.settled(id);
    expect(invocationOf(id)).toBeUndefined();
    await expect(fromRunbook({ ssmExecution: id })).rejects.toThrow(
      /is not given \(approve step Failed, Rejected\)/,
    );
    expect(await getGateRequest(deps.db, gates.one)).toBeUndefined();
    expect(await listGateAudit(deps.db, gates.one)).toEqual([]);
  });

  it('an execution id that does not exist, or extra claims beside it, get nothing', async () => {
    await expect(fromRunbook({ ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909' })).rejects.toThrow(
      /does not exist: nothing changed/,
    );
    await expect(
      fromRunbook({ ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909', gate: gates.one }),
    ).rejects.toThrow(/carries only "ssmExecution"; "gate" would be a claim/);
    expect(await getGateRequest(deps.db, gates.one)).toBeUndefined();
  });

  it("an approved execution of a runbook that is not one of the function's own opens nothing", async () => {
    const id = await start('mallorys-own-runbook', { reason: ['trust me'] }, MALLORY);
    await signal(MALLORY, id, 'Approve');
    await standIn.ssm.settled(id);
    expect(invocationOf(id)?.error).toMatch(
      /ran the document 'mallorys-own-runbook', which is not a gate runbook/,
    );
    expect(await getGateRequest(deps.db, gates.one)).toBeUndefined();
    expect(await listGateAudit(deps.db, gates.one)).toEqual([]);
  });

  it('requireVerified refuses a console test event (a claim); a runbook approval and a schedule still count', async () => {
    await expect(
      invoke({ gate: gates.strict, action: 'open', requestedBy: 'alice', reason: 'from the console' }),
    ).rejects.toThrow(/takes verified requests only \(requireVerified\)/);
    await expect(invoke({ gate: gates.strict, action: 'close', requestedBy: 'alice' })).rejects.toThrow(
      /requireVerified/,
    );
    expect(await listGateAudit(deps.db, gates.strict)).toEqual([]);
    expect((await invoke({ gate: gates.strict, action: 'status' })).status.state).toBe('closed');

    const id = await start(gates.strict, { reason: ['CHG-10'] });
    await signal(ALICE, id, 'Approve');
    await standIn.ssm.settled(id);
    expect(await getGateRequest(deps.db, gates.strict)).toMatchObject({
      requestedBy: ALICE.arn,
      verified: true,
      source: 'runbook',
    });
    const firing = await invoke({
      gate: gates.strict,
      action: 'close',
      source: 'schedule',
      requestedBy: `schedule/${gates.strict}/0`,
      requestedAt: '2026-01-05T09:00:00Z',
    });
    expect(firing.outcome).toBe('accepted');
  });

  it('the handler as deployed reads the record through its own SSM client (SLUICE_GATE_RUNBOOKS, AWS_ENDPOINT_URL_SSM)', async () => {
    process.env.AWS_ENDPOINT_URL_SSM = standIn.endpoint;
    process.env.SLUICE_GATE_RUNBOOKS = JSON.stringify(Object.fromEntries(runbooks));
    const id = await start(gates.one, { reason: ['CHG-11'] });
    await expect(deployedHandler({ ssmExecution: id }, RUNBOOKS_ENTRY)).rejects.toThrow(
      new RegExp(
        `gate '${gates.one}': the approval of Automation execution ${id} is not given \\(approve step Waiting`,
      ),
    );
    await expect(
      deployedHandler({ ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909' }, RUNBOOKS_ENTRY),
    ).rejects.toThrow(/does not exist/);
  });
});
