// Who signed must be who may act, on the paths besides gate requests: rollout actions through the
// rollouts entry, approvals of a gate's Systems Manager runbook and the break-glass runbook. Each
// signer (STS's answer, or the principal Systems Manager records) must be a grantee of the entry
// it acts through, of a trusted account; else it is refused, naming it, and nothing is written.
// On the real components: DynamoDB Local, kube-apiserver, the registry, the STS and SSM stand-ins
// (which verify SigV4).
import {
  GetAutomationExecutionCommand,
  SendAutomationSignalCommand,
  StartAutomationExecutionCommand,
} from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomationDocument, SsmEndpoint } from '../../dev/ssm-endpoint.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import type { GateRequestResult } from '../../functions/core/gates/requests.ts';
import { getGateRequest, listGateAudit } from '../../functions/core/store/gates.ts';
import { getGeneration, listRolloutActions } from '../../functions/core/store/rollouts.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { breakGlassRunbookContent } from '../../lib/break-glass-runbook.ts';
import { runbookContent } from '../../lib/runbooks.ts';
import { engineDeps, registerDelivery } from '../support/deliveries.ts';
import { inProcessGateDeps, registerGate, TEST_ACCOUNT } from '../support/gates.ts';
import { fleet, signedRolloutAction } from '../support/rollouts.ts';
import { listenSsm, ssmClient, ssmIdentity } from '../support/ssm.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const { alice, mallory, outsider } = TEST_IDENTITIES;

describe('rollout actions: the signer must be a grantee of the rollouts entry', () => {
  it('halt, resume and rollback signed by a non-grantee or another account are refused; nothing is recorded', async () => {
    const f = await fleet(bed, { waves: [1, 1], start: new Date().toISOString() });
    const [[canary]] = f.waves as [[string], [string]];
    // The canary took v1; wave 2 has not: the rollout is in progress, so a halt is possible.
    f.loseEvents();
    await reconcile(canary, f.deps);
    const generation = await getGeneration(f.deps.db, f.name);
    const handler = gateHandler(() => ({
      ...f.gateDeps,
      signers: {
        trustedAccounts: [TEST_ACCOUNT],
        grantees: new Map([
          [
            'rollouts',
            [
              `arn:aws:iam::${TEST_ACCOUNT}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Approver_0123456789abcdef`,
            ],
          ],
        ]),
      },
    }));
    const act = (action: 'halt' | 'resume' | 'rollback', who: TestIdentity) =>
      signedRolloutAction(handler, { rollout: f.name, action, reason: `INC-5 ${action}` }, who);
    for (const action of ['halt', 'resume', 'rollback'] as const) {
      await expect(act(action, mallory)).rejects.toThrow(
        `rollout '${f.name}': ${action} refused: signed by ${mallory.arn}: ${mallory.arn} is not granted the entry rollouts`,
      );
      await expect(act(action, outsider)).rejects.toThrow(
        'account 999999999999 is not one this stack trusts',
      );
    }
    expect(await listRolloutActions(f.deps.db, f.name)).toEqual([]);
    expect(await getGeneration(f.deps.db, f.name)).toEqual(generation);
    // A grantee's halt is taken.
    expect(await act('halt', alice)).toMatchObject({ record: { action: 'halt', by: alice.arn } });
  });
});

// The SSM stand-in's identities are of its account, 000000000000.
const SSM_ACCOUNT = '000000000000';
const ALICE = ssmIdentity('alice', `arn:aws:iam::${SSM_ACCOUNT}:user/alice`);
const MALLORY = ssmIdentity('mallory', `arn:aws:iam::${SSM_ACCOUNT}:user/mallory`);
const ONCALL = ssmIdentity('oncall', `arn:aws:sts::${SSM_ACCOUNT}:assumed-role/Oncall/carol`);
const GATE_FUNCTION = ssmIdentity('gatefn', `arn:aws:sts::${SSM_ACCOUNT}:assumed-role/sluice-gate/fn`);
const FUNCTION = `arn:aws:lambda:us-east-1:${SSM_ACCOUNT}:function:sluice-gate`;
const BREAK_GLASS_RUNBOOK = 'sluice-break-glass-0123456789';

describe('runbooks: the approvers and starters Systems Manager records must be grantees', () => {
  const deps = engineDeps();
  const gateDeps = {
    ...inProcessGateDeps(deps),
    reconcileNow: async () => {},
    // alice is granted opening the gate and breaking the glass; mallory and the on-call role are not.
    signers: { trustedAccounts: [SSM_ACCOUNT], grantees: new Map<string, readonly string[]>() },
  };
  const gate = uniqueName('rb');
  const gateRunbook = `sluice-${gate}-0123456789`;
  const invocations: { payload: string; error?: string; result?: unknown }[] = [];
  let ssm: SsmEndpoint;
  let endpoint: string;
  const client = (who: TestIdentity) => ssmClient(endpoint, who);
  const handler = gateHandler(
    () => gateDeps,
    () => ({
      runbooks: new Map([[gate, gateRunbook]]),
      breakGlassRunbook: BREAK_GLASS_RUNBOOK,
      readAutomation: ssmAutomationReader(client(GATE_FUNCTION)),
    }),
  );

  beforeAll(async () => {
    gateDeps.signers.grantees.set(`open_${gate}`, [ALICE.arn]);
    gateDeps.signers.grantees.set('break_glass', [ALICE.arn]);
    const spec = await registerGate(deps, { name: gate, default: 'closed', window: '1h', maxOverride: '2h' });
    await registerDelivery(deps, bed, {
      name: uniqueName('rb'),
      repository: uniqueName('rb/app'),
      gates: [{ name: gate }],
    });
    ({ ssm, endpoint } = await listenSsm({
      identities: [ALICE, MALLORY, ONCALL, GATE_FUNCTION],
      documents: new Map([
        [
          BREAK_GLASS_RUNBOOK,
          breakGlassRunbookContent({
            functionArn: `${FUNCTION}:break_glass`,
            assumeRoleArn: `arn:aws:iam::${SSM_ACCOUNT}:role/sluice-break-glass`,
          }) as unknown as AutomationDocument,
        ],
        [
          gateRunbook,
          // A document that lists mallory too (written before a grant was taken back, or by hand).
          runbookContent({
            gate: spec,
            approvers: [ALICE.arn, MALLORY.arn],
            functionArn: `${FUNCTION}:runbooks`,
            assumeRoleArn: `arn:aws:iam::${SSM_ACCOUNT}:role/sluice-automation`,
          }) as unknown as AutomationDocument,
        ],
      ]),
      invoke: async (functionName, payload) => {
        const entry: (typeof invocations)[number] = { payload };
        invocations.push(entry);
        try {
          const result = await handler(JSON.parse(payload) as object, { invokedFunctionArn: functionName });
          entry.result = result;
          return { statusCode: 200, payload: JSON.stringify(result) };
        } catch (error) {
          entry.error = (error as Error).message;
          return {
            statusCode: 200,
            payload: JSON.stringify({ errorMessage: entry.error }),
            functionError: 'Unhandled',
          };
        }
      },
    }));
  });
  afterAll(async () => {
    await new Promise((done) => ssm.server.close(done));
  });

  const start = async (document: string, parameters: Record<string, string[]>, as: TestIdentity) => {
    const { AutomationExecutionId } = await client(as).send(
      new StartAutomationExecutionCommand({ DocumentName: document, Parameters: parameters }),
    );
    return AutomationExecutionId!;
  };
  const invocationOf = (id: string) => invocations.find((i) => i.payload.includes(id));

  it('a runbook approval by an approver the document lists but the stack did not grant opens nothing', async () => {
    const id = await start(gateRunbook, { reason: ['CHG-11'] }, ONCALL);
    await client(MALLORY).send(
      new SendAutomationSignalCommand({
        AutomationExecutionId: id,
        SignalType: 'Approve',
        Payload: { Comment: ['ok'] },
      }),
    );
    await ssm.settled(id);
    // Verified by Systems Manager's record, the refusal is the function's answer (no function
    // error), audited with why; the runbook fails the execution on it.
    const why = `gate '${gate}': the approval of Automation execution ${id} refused: signed by ${MALLORY.arn}: ${MALLORY.arn} is not granted the entry open_${gate} (its grantees: ${ALICE.arn}); the gate is unchanged`;
    expect(invocationOf(id)?.error).toBeUndefined();
    const answer = invocationOf(id)?.result as GateRequestResult | undefined;
    expect(answer).toMatchObject({ outcome: 'refused', status: { state: 'closed' } });
    expect(answer?.message).toContain(why);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toMatchObject([
      { outcome: 'refused', requestedBy: MALLORY.arn, refusedBecause: why },
    ]);
    const { AutomationExecution } = await client(ONCALL).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: id }),
    );
    expect(AutomationExecution?.AutomationExecutionStatus).toBe('Failed');
  });

  it('a break-glass runbook started by someone not granted break_glass makes no override', async () => {
    const id = await start(
      BREAK_GLASS_RUNBOOK,
      { gates: [gate], revision: [`v3@sha256:${'3'.repeat(64)}`], window: ['30m'], reason: ['INC-12'] },
      ONCALL,
    );
    await ssm.settled(id);
    // Verified by Systems Manager's record, the refusal is the function's answer (no function
    // error), a line of the gate's history naming the starter and why; the runbook fails on it.
    const why = `the break-glass override of Automation execution ${id} refused: signed by ${ONCALL.arn}: ${ONCALL.arn} is not granted the entry break_glass`;
    expect(invocationOf(id)?.error).toBeUndefined();
    expect(invocationOf(id)?.result).toMatchObject({ action: 'override', outcome: 'refused', overrides: [] });
    expect((await listGateAudit(deps.db, gate))[0]).toMatchObject({
      action: 'override',
      outcome: 'refused',
      requestedBy: ONCALL.arn,
      refusedBecause: expect.stringContaining(why),
    });
    const { AutomationExecution } = await client(ONCALL).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: id }),
    );
    expect(AutomationExecution?.AutomationExecutionStatus).toBe('Failed');
    expect(await activeOverrides(deps.db, gate, new Date())).toEqual([]);
    // Started by a grantee, it is made.
    const own = await start(
      BREAK_GLASS_RUNBOOK,
      { gates: [gate], revision: [`v3@sha256:${'3'.repeat(64)}`], window: ['30m'], reason: ['INC-12'] },
      ALICE,
    );
    await ssm.settled(own);
    expect(invocationOf(own)?.error).toBeUndefined();
    expect(await activeOverrides(deps.db, gate, new Date())).toMatchObject([{ madeBy: ALICE.arn }]);
  });
});
