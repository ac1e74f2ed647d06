// Approving in the AWS console: a gate's Systems Manager runbook against the SSM stand-in (which
// verifies SigV4 and who may approve) and the gate handler on DynamoDB Local. The gate function
// trusts nothing from an invocation but the execution id, and reads the rest from the record.
import { SendAutomationSignalCommand, SSMClient, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSsmEndpoint, type AutomationDocument, type SsmEndpoint } from '../../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../../functions/core/aws/ssm-automation.ts';
import type { Gate } from '../../../functions/core/config/index.ts';
import type { GateRequestResult } from '../../../functions/core/gates/requests.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateHandler, handler as deployedHandler } from '../../../functions/gate/handler.ts';
import { runbookContent } from '../../../lib/runbooks.ts';
import { engineDeps, registerDelivery } from '../../support/deliveries.ts';
import { inProcessGateDeps, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

const ACCOUNT = '000000000000';
const identity = (name: string, arn: string): TestIdentity => ({
  accessKeyId: `AKIA${name.toUpperCase().padEnd(16, 'X')}`,
  secretAccessKey: `secret-of-${name}-${'k'.repeat(20)}`,
  arn,
});
const ALICE = identity('alice', `arn:aws:iam::${ACCOUNT}:user/alice`);
const BOB = identity('bob', `arn:aws:iam::${ACCOUNT}:user/bob`);
const MALLORY = identity('mallory', `arn:aws:iam::${ACCOUNT}:user/mallory`);
const REQUESTER = identity('requester', `arn:aws:sts::${ACCOUNT}:assumed-role/Developer/dev`);
const GATE_FUNCTION = identity('gatefn', `arn:aws:sts::${ACCOUNT}:assumed-role/sluice-gate/fn`);
/** The credentials the test environment gives the SDK (componentsEnv): the handler as deployed signs with them. */
const LOCAL: TestIdentity = {
  accessKeyId: 'local',
  secretAccessKey: 'local',
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/sluice-gate/local`,
};
const FUNCTION_ARN = `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate:runbooks`;

const deps = engineDeps();
const gateDeps = inProcessGateDeps(deps);
const gates = {
  two: uniqueName('two'),
  one: uniqueName('one'),
  strict: uniqueName('strict'),
  named: uniqueName('named'),
  frozen: uniqueName('frozen'),
};
/** The function's own runbooks, as the construct names them in SLUICE_GATE_RUNBOOKS. */
const runbooks = new Map(Object.values(gates).map((gate) => [gate, `sluice-${gate}-0123456789`]));
const invocations: { payload: string; result?: GateRequestResult; error?: string }[] = [];
let ssm: SsmEndpoint;
let endpoint: string;

const client = (who: TestIdentity) =>
  new SSMClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: who.accessKeyId, secretAccessKey: who.secretAccessKey },
  });
const handler = gateHandler(
  () => gateDeps,
  () => ({ runbooks, readAutomation: ssmAutomationReader(client(GATE_FUNCTION)) }),
);
const invoke = (event: object) => handler(event) as Promise<GateRequestResult>;

const document = (gate: Gate, approvers: string[]) =>
  runbookContent({
    gate,
    approvers,
    functionArn: FUNCTION_ARN,
    assumeRoleArn: `arn:aws:iam::${ACCOUNT}:role/sluice-automation`,
    notificationArn: `arn:aws:sns:us-east-1:${ACCOUNT}:approvals`,
  }) as unknown as AutomationDocument;

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
  const documents = new Map<string, AutomationDocument>([
    [runbooks.get(gates.named)!, document(named, [ALICE.arn])],
    [runbooks.get(gates.frozen)!, document(frozen, [ALICE.arn])],
    [runbooks.get(gates.two)!, document(two, [ALICE.arn, BOB.arn])],
    [runbooks.get(gates.one)!, document(one, [ALICE.arn])],
    [runbooks.get(gates.strict)!, document(strict, [ALICE.arn])],
    // A runbook someone else made, naming themselves as approver and invoking the gate function.
    ['mallorys-own-runbook', document({ ...one, approvers: 1 }, [MALLORY.arn])],
  ]);
  ssm = createSsmEndpoint({
    identities: [ALICE, BOB, MALLORY, REQUESTER, GATE_FUNCTION, LOCAL],
    documents,
    invoke: async (functionName, payload) => {
      expect(functionName).toBe(FUNCTION_ARN);
      const entry: (typeof invocations)[number] = { payload };
      invocations.push(entry);
      try {
        entry.result = await invoke(JSON.parse(payload) as object);
        return { statusCode: 200, payload: JSON.stringify(entry.result) };
      } catch (error) {
        entry.error = (error as Error).message;
        return {
          statusCode: 200,
          payload: JSON.stringify({ errorMessage: entry.error }),
          functionError: 'Unhandled',
        };
      }
    },
  });
  await new Promise<void>((ready) => ssm.server.listen(0, '127.0.0.1', ready));
  endpoint = `http://127.0.0.1:${(ssm.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_SSM;
  delete process.env.SLUICE_GATE_RUNBOOKS;
  await new Promise((done) => ssm.server.close(done));
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

describe('approving in the console (Systems Manager runbook)', () => {
  it('a two-approver runbook opens the gate with both approvers recorded as verified', async () => {
    const id = await start(gates.two, { window: ['30m'], reason: ['CHG-7'] });
    await signal(ALICE, id, 'Approve');
    await signal(BOB, id, 'Approve');
    await ssm.settled(id);
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

    // The same execution id sent again (after a close) is a replay: it changes nothing.
    await invoke({ gate: gates.two, action: 'close', requestedBy: 'oncall', source: 'cli' });
    const audit = await listGateAudit(deps.db, gates.two);
    await expect(invoke({ ssmExecution: id })).rejects.toThrow(/already used .*a replay changes nothing/);
    expect(await listGateAudit(deps.db, gates.two)).toEqual(audit);
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
    await ssm.settled(id);
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
    await ssm.settled(id);
    expect(invocationOf(id)?.error).toMatch(
      /asked for approval at .*, before the gate was last closed .*: approvals given before a close do not open the gate after it; start the runbook again/,
    );
    expect(await getGateRequest(deps.db, gates.frozen)).toMatchObject({
      action: 'close',
      requestedBy: 'oncall',
    });
    // Started again after the close, it opens the gate.
    const again = await start(gates.frozen, { reason: ['CHG-10'] });
    await signal(ALICE, again, 'Approve');
    await ssm.settled(again);
    expect(invocationOf(again)?.result?.status.state).toBe('open');
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
    await expect(invoke({ ssmExecution: id })).rejects.toThrow(
      /approval of Automation execution .* is not given \(approve step Waiting, Waiting\)/,
    );
    expect(await listGateAudit(deps.db, gates.two)).toEqual(before);
  });

  it('a rejected runbook never invokes the function, and claiming its id changes nothing', async () => {
    const id = await start(gates.one, { reason: ['CHG-9'] });
    await signal(ALICE, id, 'Reject');
    await ssm.settled(id);
    expect(invocationOf(id)).toBeUndefined();
    await expect(invoke({ ssmExecution: id })).rejects.toThrow(
      /is not given \(approve step Failed, Rejected\)/,
    );
    expect(await getGateRequest(deps.db, gates.one)).toBeUndefined();
    expect(await listGateAudit(deps.db, gates.one)).toEqual([]);
  });

  it('an execution id that does not exist, or extra claims beside it, get nothing', async () => {
    await expect(invoke({ ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909' })).rejects.toThrow(
      /does not exist: nothing changed/,
    );
    await expect(
      invoke({ ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909', gate: gates.one }),
    ).rejects.toThrow(/carries only "ssmExecution"; "gate" would be a claim/);
    expect(await getGateRequest(deps.db, gates.one)).toBeUndefined();
  });

  it("an approved execution of a runbook that is not one of the function's own opens nothing", async () => {
    const id = await start('mallorys-own-runbook', { reason: ['trust me'] }, MALLORY);
    await signal(MALLORY, id, 'Approve');
    await ssm.settled(id);
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
    await ssm.settled(id);
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
    process.env.AWS_ENDPOINT_URL_SSM = endpoint;
    process.env.SLUICE_GATE_RUNBOOKS = JSON.stringify(Object.fromEntries(runbooks));
    const id = await start(gates.one, { reason: ['CHG-11'] });
    await expect(deployedHandler({ ssmExecution: id })).rejects.toThrow(
      new RegExp(
        `gate '${gates.one}': the approval of Automation execution ${id} is not given \\(approve step Waiting`,
      ),
    );
    await expect(deployedHandler({ ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909' })).rejects.toThrow(
      /does not exist/,
    );
  });
});
