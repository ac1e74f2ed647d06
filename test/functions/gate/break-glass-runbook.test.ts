// Breaking the glass in the AWS console: the break-glass runbook against the SSM stand-in (which
// verifies SigV4: its record names who started an execution) and the gate handler on DynamoDB
// Local and the kube-apiserver. The function trusts nothing of the invocation but the execution
// id: who made the override and what it asks are read from Systems Manager's record.
import { CoreV1Api } from '@kubernetes/client-node';
import { GetAutomationExecutionCommand, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomationDocument, SsmEndpoint } from '../../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../../functions/core/aws/ssm-automation.ts';
import type { OverrideResult } from '../../../functions/core/break-glass/override-request.ts';
import { gateStatus } from '../../../functions/core/gates/requests.ts';
import { activeOverrides } from '../../../functions/core/store/gate-overrides.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { breakGlassRunbookContent } from '../../../lib/break-glass-runbook.ts';
import { runbookContent } from '../../../lib/runbooks.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { configMapValue, configMapYaml, inProcessGateDeps, registerGate } from '../../support/gates.ts';
import { listenSsm, ssmClient, ssmIdentity } from '../../support/ssm.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

const ACCOUNT = '000000000000';
const identity = ssmIdentity;
const ONCALL = identity('oncall', `arn:aws:sts::${ACCOUNT}:assumed-role/Oncall/carol`);
const ALICE = identity('alice', `arn:aws:iam::${ACCOUNT}:user/alice`);
const GATE_FUNCTION = identity('gatefn', `arn:aws:sts::${ACCOUNT}:assumed-role/sluice-gate/fn`);
const FUNCTION = `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate`;
const BREAK_GLASS_ENTRY = `${FUNCTION}:break_glass`;
const RUNBOOKS_ENTRY = `${FUNCTION}:runbooks`;
const BREAK_GLASS_RUNBOOK = 'sluice-break-glass-0123456789';
const HOUR = 3_600_000;

const deps = engineDeps();
const published: { detailType: string; detail: unknown }[] = [];
const gateDeps = {
  ...inProcessGateDeps(deps),
  publish: async (detailType: string, detail: unknown) => void published.push({ detailType, detail }),
};
const gate = uniqueName('freeze');
const delivery = uniqueName('glass');
const ns = uniqueName('glass');
const repository = uniqueName('glass/app');
const gateRunbook = `sluice-${gate}-0123456789`;
const invocations: { payload: string; entry: string; result?: OverrideResult; error?: string }[] = [];
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
  await createNamespace(bed.kubeConfig(), ns);
  const spec = await registerGate(deps, { name: gate, default: 'closed', window: '1h', maxOverride: '2h' });
  await registerDelivery(deps, bed, { name: delivery, repository, tag: 'release', gates: [{ name: gate }] });
  // The documents as the construct writes them.
  const breakGlassRunbook = breakGlassRunbookContent({
    functionArn: BREAK_GLASS_ENTRY,
    assumeRoleArn: `arn:aws:iam::${ACCOUNT}:role/sluice-break-glass`,
  });
  const approvalRunbook = runbookContent({
    gate: spec,
    approvers: [ALICE.arn],
    functionArn: RUNBOOKS_ENTRY,
    assumeRoleArn: `arn:aws:iam::${ACCOUNT}:role/sluice-automation`,
  });
  ({ ssm, endpoint } = await listenSsm({
    identities: [ONCALL, ALICE, GATE_FUNCTION],
    documents: new Map([
      [BREAK_GLASS_RUNBOOK, breakGlassRunbook as unknown as AutomationDocument],
      [gateRunbook, approvalRunbook as unknown as AutomationDocument],
    ]),
    invoke: async (functionName, payload) => {
      const entry: (typeof invocations)[number] = { payload, entry: functionName };
      invocations.push(entry);
      try {
        entry.result = (await handler(JSON.parse(payload) as object, {
          invokedFunctionArn: functionName,
        })) as OverrideResult;
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
  }));
});
afterAll(async () => {
  await new Promise((done) => ssm.server.close(done));
});

async function breakGlass(parameters: Record<string, string[]>, as = ONCALL, document = BREAK_GLASS_RUNBOOK) {
  const { AutomationExecutionId } = await client(as).send(
    new StartAutomationExecutionCommand({ DocumentName: document, Parameters: parameters }),
  );
  await ssm.settled(AutomationExecutionId!);
  return {
    id: AutomationExecutionId!,
    ...invocations.find((i) => i.payload.includes(AutomationExecutionId!))!,
  };
}
const push = async (value: string) =>
  `release@${await pushFiles(bed, repository, 'release', { 'cm.yaml': configMapYaml('app', ns, value) })}`;

describe('breaking the glass in the console (the break-glass runbook)', () => {
  it("makes the override as the runbook's starter, loud and audited, and lets the hotfix through at once", async () => {
    const hotfix = await push('1.3.1');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed' });

    const made = await breakGlass({
      gates: [gate],
      revision: [hotfix],
      window: ['1h'],
      reason: ['INC-77 hotfix'],
    });
    expect(made.error).toBeUndefined();
    expect(made.entry).toBe(BREAK_GLASS_ENTRY);
    expect(made.result).toMatchObject({ outcome: 'accepted', reconciling: [delivery] });
    const [override] = await activeOverrides(deps.db, gate, gateDeps.clock.now());
    expect(override).toMatchObject({
      revision: hotfix,
      madeBy: ONCALL.arn,
      source: 'runbook',
      reason: `INC-77 hotfix [runbook ${made.id}]`,
    });
    expect(Date.parse(override!.endsAt) - Date.parse(override!.madeAt)).toBe(HOUR);
    expect(await configMapValue(core, 'app', ns)).toBe('1.3.1');
    expect(published).toContainEqual({
      detailType: 'Gate Override',
      detail: expect.objectContaining({
        gates: [gate],
        revision: hotfix,
        madeBy: ONCALL.arn,
        source: 'runbook',
      }),
    });
    expect((await listGateAudit(deps.db, gate)).at(-1)).toMatchObject({
      action: 'override',
      requestedBy: ONCALL.arn,
      source: 'runbook',
    });
    // The gate itself is untouched.
    expect((await gateStatus(gate, gateDeps)).status).toMatchObject({ state: 'closed' });
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();

    // The execution makes one override: sent again once its step ended, it changes nothing.
    const audit = await listGateAudit(deps.db, gate);
    await expect(
      handler({ ssmExecution: made.id }, { invokedFunctionArn: BREAK_GLASS_ENTRY }),
    ).rejects.toThrow(
      /is not running its 'override' step \(aws:invokeLambdaFunction, Success\).*nothing overridden/,
    );
    expect(await listGateAudit(deps.db, gate)).toEqual(audit);
  });

  it("refuses what the gate does not allow as an answer, audited with why, and fails the execution; the execution's own bad parameters write nothing", async () => {
    const hotfix = await push('1.3.2');
    const audit = await listGateAudit(deps.db, gate);
    const tooLong = await breakGlass({
      gates: [gate],
      revision: [hotfix],
      window: ['3h'],
      reason: ['INC-78'],
    });
    // Verified by Systems Manager's record, the refusal is the function's answer (no function
    // error: the errors alarm stays quiet), a line of the gate's history, and a failed execution.
    const why = new RegExp(`gate '${gate}': an override may last at most 2h .*not 3h`);
    expect(tooLong.error).toBeUndefined();
    expect(tooLong.result).toMatchObject({ action: 'override', outcome: 'refused', overrides: [] });
    expect(tooLong.result?.message).toMatch(why);
    // Newest first: the lines written since.
    const history = await listGateAudit(deps.db, gate);
    const refused = history.slice(0, history.length - audit.length);
    expect(refused).toMatchObject([
      {
        action: 'override',
        outcome: 'refused',
        requestedBy: ONCALL.arn,
        verified: true,
        source: 'runbook',
        revision: hotfix,
        windowMs: 3 * HOUR,
        reason: `INC-78 [runbook ${tooLong.id}]`,
      },
    ]);
    expect(refused[0]!.refusedBecause).toMatch(why);
    const { AutomationExecution } = await client(ONCALL).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: tooLong.id }),
    );
    expect(AutomationExecution?.AutomationExecutionStatus).toBe('Failed');
    expect(AutomationExecution?.StepExecutions?.find((step) => step.StepName === 'refused')).toMatchObject({
      StepStatus: 'Failed',
      FailureMessage: expect.stringMatching(why),
    });
    expect(await activeOverrides(deps.db, gate, gateDeps.clock.now())).toHaveLength(1);
    const answered = await listGateAudit(deps.db, gate);

    const blank = await breakGlass({ gates: [gate], revision: [hotfix], window: ['1h'], reason: ['  '] });
    expect(blank.error).toMatch(/parameters: "reason" is required and may not be blank/);
    const tag = await breakGlass({
      gates: [gate],
      revision: ['release'],
      window: ['1h'],
      reason: ['INC-78'],
    });
    expect(tag.error).toMatch(/"revision": "release" does not name a digest/);
    expect(await listGateAudit(deps.db, gate)).toEqual(answered);
    // Systems Manager itself refuses a start without the required parameters.
    await expect(
      client(ONCALL).send(
        new StartAutomationExecutionCommand({
          DocumentName: BREAK_GLASS_RUNBOOK,
          Parameters: { gates: [gate] },
        }),
      ),
    ).rejects.toThrow(/parameter revision is required/);
  });

  it('only the break-glass runbook, through the break_glass entry, with nothing but the execution id', async () => {
    const hotfix = await push('1.3.3');
    // A break-glass runbook execution (its own answer a refusal: 9h is past maxOverride).
    const other = await breakGlass({ gates: [gate], revision: [hotfix], window: ['9h'], reason: ['INC-79'] });
    expect(other.result).toMatchObject({ outcome: 'refused' });
    const audit = await listGateAudit(deps.db, gate);
    // A gate's approval runbook (approved by its approver) sent to the break_glass entry.
    const { AutomationExecutionId: id } = await client(ALICE).send(
      new StartAutomationExecutionCommand({ DocumentName: gateRunbook, Parameters: { reason: ['x'] } }),
    );
    await expect(handler({ ssmExecution: id }, { invokedFunctionArn: BREAK_GLASS_ENTRY })).rejects.toThrow(
      new RegExp(`ran the document '${gateRunbook}', which is not this function's break-glass runbook`),
    );
    // A break-glass runbook execution sent to another entry (the runbooks one): not a gate runbook there.
    await expect(handler({ ssmExecution: other.id }, { invokedFunctionArn: RUNBOOKS_ENTRY })).rejects.toThrow(
      new RegExp(`ran the document '${BREAK_GLASS_RUNBOOK}', which is not a gate runbook of this function`),
    );
    // Claims beside the id.
    await expect(
      handler(
        { ssmExecution: id, madeBy: 'arn:aws:iam::000000000000:user/root' },
        { invokedFunctionArn: BREAK_GLASS_ENTRY },
      ),
    ).rejects.toThrow(/carries only "ssmExecution"; "madeBy" would be a claim/);
    expect(await listGateAudit(deps.db, gate)).toEqual(audit);
    expect(await activeOverrides(deps.db, gate, gateDeps.clock.now())).toHaveLength(1);
  });
});
