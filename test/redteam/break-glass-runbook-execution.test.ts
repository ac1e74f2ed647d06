// Red team: the break-glass runbook (console path). Each test asserts the promise and failed on the
// code as it was:
// - An execution started in Interactive mode ("Manual execution" in the console) waits until
//   someone sends StartStep for its 'override' step. grantBreakGlass's grantees cannot send it
//   (no ssm:SendAutomationSignal), but every gate approver can (grantGateRequests gives it on all
//   executions). The override was then made as the starter, at a time the approver chose (the
//   ten minutes were counted from the step's start, not the execution's): days later, after the
//   starter's need (or grant) had passed.
// - A refused override (a gate not registered, a window past maxOverride) makes nothing. Once the
//   execution is verified, the refusal is the function's answer (audited in the gate's history,
//   and it takes the execution, so it is answered once), and the runbook fails on it.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  GetAutomationExecutionCommand,
  SendAutomationSignalCommand,
  StartAutomationExecutionCommand,
} from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomationDocument, SsmEndpoint } from '../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import { parseDelivery } from '../../functions/core/config/index.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import { listGateAudit } from '../../functions/core/store/gates.ts';
import { verifyRunbookOverride } from '../../functions/core/break-glass/runbook-override.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { breakGlassRunbookContent } from '../../lib/break-glass-runbook.ts';
import { engineDeps } from '../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../support/gates.ts';
import { listenSsm, ssmClient, ssmIdentity } from '../support/ssm.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();

const ACCOUNT = '000000000000';
const identity = ssmIdentity;
/** A grantee of grantBreakGlass. */
const ALICE = identity('bgalice', `arn:aws:sts::${ACCOUNT}:assumed-role/OnCall/alice`);
/** A gate approver (grantGateRequests): ssm:SendAutomationSignal on every execution, no break-glass. */
const APPROVER = identity('bgapprover', `arn:aws:sts::${ACCOUNT}:assumed-role/Approver/mallory`);
const GATE_FUNCTION = identity('bggatefn', `arn:aws:sts::${ACCOUNT}:assumed-role/sluice-gate/fn`);
const FUNCTION_ARN = `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate`;
const DOCUMENT = 'sluice-break-glass-0123456789';
const REVISION = `1.3.1@sha256:${'b'.repeat(64)}`;
const DAY = 24 * 3_600_000;

const deps = engineDeps();
const clock = manualClock(new Date().toISOString());
const gateDeps = { ...inProcessGateDeps({ ...deps, clock }), clock, reconcileNow: async () => {} };
const gate = uniqueName('bgrb');
const delivery = uniqueName('bgrb');
/** How far AWS's clock (the stand-in's, and its callers') is ahead of now. */
let offset = 0;
/** How many times the step's invocation reaches the function at once (a duplicate delivery). */
let copies = 1;
let ssm: SsmEndpoint;
let endpoint: string;

const client = (who: TestIdentity) => ssmClient(endpoint, who, offset);
const handler = gateHandler(
  () => gateDeps,
  () => ({
    runbooks: new Map(),
    readAutomation: ssmAutomationReader(client(GATE_FUNCTION)),
    breakGlassRunbook: DOCUMENT,
  }),
);

beforeAll(async () => {
  await registerGate({ ...deps, clock }, { name: gate, default: 'closed' });
  await putDelivery(
    deps.db,
    parseDelivery({
      name: delivery,
      source: {
        url: `oci://${bed.registry.host}/${uniqueName('bgrb/app')}`,
        tag: 'release',
        provider: 'aws',
      },
      cluster: { kubeconfig: bed.kube.kubeconfig },
      gates: [{ name: gate, blocks: 'all' }],
    }),
    new Date(),
  );
  const document = breakGlassRunbookContent({
    functionArn: `${FUNCTION_ARN}:break_glass`,
    assumeRoleArn: `arn:aws:iam::${ACCOUNT}:role/sluice-break-glass-automation`,
  }) as unknown as AutomationDocument;
  ({ ssm, endpoint } = await listenSsm({
    identities: [ALICE, APPROVER, GATE_FUNCTION],
    documents: new Map([[DOCUMENT, document]]),
    now: () => new Date(Date.now() + offset),
    // The step invokes the break_glass alias with the resolved payload, as Lambda would.
    invoke: async (functionName, payload) => {
      try {
        const invoke = () => handler(JSON.parse(payload) as object, { invokedFunctionArn: functionName });
        const results = await Promise.allSettled(Array.from({ length: copies }, invoke));
        const made = results.find((r) => r.status === 'fulfilled');
        if (!made) throw (results[0] as PromiseRejectedResult).reason;
        return { statusCode: 200, payload: JSON.stringify(made.value) };
      } catch (error) {
        return {
          statusCode: 200,
          payload: JSON.stringify({ errorMessage: (error as Error).message }),
          functionError: 'Unhandled',
        };
      }
    },
  }));
});
afterAll(async () => {
  offset = 0;
  await new Promise((done) => ssm.server.close(done));
});

const start = async (parameters: Record<string, string[]>, mode?: 'Auto' | 'Interactive') => {
  const { AutomationExecutionId: id } = await client(ALICE).send(
    new StartAutomationExecutionCommand({ DocumentName: DOCUMENT, Parameters: parameters, Mode: mode }),
  );
  return id!;
};
const params = (overrides: Record<string, string[]> = {}) => ({
  revision: [REVISION],
  window: ['1h'],
  reason: ['INC-77 hotfix'],
  gates: [gate],
  ...overrides,
});
const inForce = async () => (await activeOverrides(deps.db, gate, clock.now())).length;
/** Has the execution's claim been written? */
const claimed = async (id: string) =>
  (
    await deps.db.doc.send(
      new GetCommand({ TableName: deps.db.table, Key: { pk: `runbook-execution#${id}`, sk: 'used' } }),
    )
  ).Item !== undefined;
/** Why the execution's override step failed, as Systems Manager records it. */
const failure = async (id: string) => {
  const { AutomationExecution } = await client(ALICE).send(
    new GetAutomationExecutionCommand({ AutomationExecutionId: id }),
  );
  return AutomationExecution?.StepExecutions?.find((step) => step.StepName === 'override')?.FailureMessage;
};
/** The gate approver runs the pending 'override' step of an Interactive execution. */
const startStep = async (id: string) => {
  await client(APPROVER).send(
    new SendAutomationSignalCommand({
      AutomationExecutionId: id,
      SignalType: 'StartStep',
      Payload: { StepName: ['override'] },
    }),
  );
  await ssm.settled(id);
};

describe('the break-glass runbook: an execution the starter did not run', () => {
  it('the console path works at all (control): an Auto execution makes the override as its starter', async () => {
    offset = 0;
    clock.set(new Date().toISOString());
    const id = await start(params());
    await ssm.settled(id);
    const [override] = await activeOverrides(deps.db, gate, clock.now());
    expect(override?.madeBy).toBe(ALICE.arn);
    expect(override?.reason).toContain(`[runbook ${id}]`);
    expect(await claimed(id)).toBe(true);
  });

  it("an Interactive execution's step run by a gate approver days later makes no override", async () => {
    offset = 0;
    clock.set(new Date(Date.now() + 2 * DAY).toISOString()); // past the control test's override
    const before = await inForce();
    // Alice picks "Manual execution" and leaves: she cannot run the step herself.
    offset = 0;
    const id = await start(params(), 'Interactive');
    // Three days later a gate approver (no break-glass grant) sends StartStep.
    offset = 3 * DAY;
    clock.set(new Date(Date.now() + offset + 1_000).toISOString());
    await startStep(id);
    expect(await inForce()).toBe(before);
    expect(await failure(id)).toMatch(/Interactive/);
  });

  it("an Interactive execution's step run by another principal at once makes no override either", async () => {
    offset = 5 * DAY;
    clock.set(new Date(Date.now() + offset + 1_000).toISOString());
    const before = await inForce();
    const id = await start(params(), 'Interactive');
    await startStep(id);
    expect(await inForce()).toBe(before);
    expect(await failure(id)).toMatch(/Interactive/);
  });

  it("the ten minutes count from the execution's start, not its step's (a record AWS could show)", async () => {
    const now = new Date();
    const record = {
      executionId: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
      documentName: DOCUMENT,
      executedBy: ALICE.arn,
      startTime: new Date(now.getTime() - 3 * DAY),
      mode: 'Auto',
      parameters: params(),
      steps: [
        {
          name: 'override',
          action: 'aws:invokeLambdaFunction',
          status: 'InProgress',
          startTime: now,
          outputs: {},
        },
      ],
    };
    await expect(
      verifyRunbookOverride(
        { ssmExecution: record.executionId },
        { runbooks: new Map(), readAutomation: async () => record, breakGlassRunbook: DOCUMENT },
        now,
      ),
    ).rejects.toThrow(/more than ten minutes ago/);
  });
});

describe('the break-glass runbook: one execution, one override', () => {
  it('two invocations of one execution at once make one override, and a replay none', async () => {
    offset = 7 * DAY;
    clock.set(new Date(Date.now() + offset + 1_000).toISOString());
    const before = await inForce();
    copies = 2;
    const id = await start(params());
    await ssm.settled(id).finally(() => (copies = 1));
    expect(await inForce()).toBe(before + 1);
    await expect(
      handler({ ssmExecution: id }, { invokedFunctionArn: `${FUNCTION_ARN}:break_glass` }),
    ).rejects.toThrow(/already used|not running/);
    expect(await inForce()).toBe(before + 1);
  });
});

describe('the break-glass runbook: a refused override makes nothing, is answered once, and is answered', () => {
  /** The execution's status and why its refused step failed, as Systems Manager records them. */
  const outcome = async (id: string) => {
    const { AutomationExecution } = await client(ALICE).send(
      new GetAutomationExecutionCommand({ AutomationExecutionId: id }),
    );
    return {
      status: AutomationExecution?.AutomationExecutionStatus,
      refused: AutomationExecution?.StepExecutions?.find((step) => step.StepName === 'refused')
        ?.FailureMessage,
    };
  };

  it('a gate that is not registered: refused, the execution answered once, and it fails saying why', async () => {
    offset = 0;
    clock.set(new Date().toISOString());
    const missing = uniqueName('nosuchgate');
    const id = await start(params({ gates: [missing] }));
    await ssm.settled(id);
    // The refusal takes the execution (red team 5): a second invocation of it writes no second row.
    expect(await claimed(id)).toBe(true);
    expect(await outcome(id)).toEqual({
      status: 'Failed',
      refused: expect.stringContaining(`gate '${missing}' is not registered`),
    });
    // No history of a gate that does not exist is made up.
    expect(await listGateAudit(deps.db, missing)).toEqual([]);
  });

  it("a window past the gate's maxOverride: refused, the execution answered once, and audited in the gate's history", async () => {
    offset = 0;
    clock.set(new Date().toISOString());
    const before = await inForce();
    const id = await start(params({ window: ['5h'] }));
    await ssm.settled(id);
    // The refusal takes the execution (red team 5): a second invocation of it writes no second row.
    expect(await claimed(id)).toBe(true);
    expect(await inForce()).toBe(before);
    expect(await outcome(id)).toEqual({
      status: 'Failed',
      refused: expect.stringContaining('may last at most 4h'),
    });
    // Earlier tests moved the clock days ahead: the history is ordered by request time.
    const history = await listGateAudit(deps.db, gate);
    expect(history.filter((line) => line.reason.includes(id))).toMatchObject([
      {
        action: 'override',
        outcome: 'refused',
        requestedBy: ALICE.arn,
        reason: `INC-77 hotfix [runbook ${id}]`,
        refusedBecause: expect.stringContaining('may last at most 4h'),
      },
    ]);
  });
});
