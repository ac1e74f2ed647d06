// Red team 6: the gate function takes an invocation only through the entry made for it (issue 41:
// the table in functions/gate/routes.ts), and beneath the table each handler still checks its own
// entry and signer. Attacks: events whose shape the router reads one way and a handler another
// (a runbook report that is also a rollout action, an override with `proof: null`, arrays,
// `__proto__`/`constructor` keys, URL-shaped events with extra keys, base64 bodies), odd
// qualifiers, and a wrongly planted row; and the legitimate senders the construct makes (schedules,
// runbooks, the ECR rule, console test events), which must still be taken.
import { SendAutomationSignalCommand, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import { Duration } from 'aws-cdk-lib';
import type { APIGatewayProxyStructuredResultV2 as FunctionUrlAnswer } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AutomationDocument } from '../../dev/ssm-endpoint.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import { stsCallerIdentity } from '../../functions/core/aws/sts-caller-identity.ts';
import { BREAK_GLASS_ALIAS, RUNBOOKS_ALIAS, SCHEDULES_ALIAS } from '../../functions/core/gates/contract.ts';
import { PUSH_RECORDS_ALIAS } from '../../functions/core/access/entry.ts';
import { gateStatus, type GateDeps, type GateRequestResult } from '../../functions/core/gates/requests.ts';
import type { RunbookDeps } from '../../functions/core/approvals/runbook-approval.ts';
import { getGateRequest, listGateAudit } from '../../functions/core/store/gates.ts';
import { imagePushers } from '../../functions/core/store/image-pushers.ts';
import { runbookExecutionUse } from '../../functions/core/store/runbook-executions.ts';
import { invokedEntry } from '../../functions/gate/entries.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { ROUTES, type GateCall } from '../../functions/gate/routes.ts';
import { shapeOf } from '../../functions/gate/shapes.ts';
import { breakGlassRunbookContent } from '../../lib/break-glass-runbook.ts';
import { invokeWithExecutionId } from '../../lib/runbooks.ts';
import { gateScheduleInput } from '../../lib/schedules.ts';
import { gateTestEventSchema } from '../../lib/test-events.ts';
import { seedDelivery, synth } from '../lib/synth.ts';
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

const deps = engineDeps();
const clock = manualClock(new Date().toISOString());
const FUNCTION = `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate`;
const through = (qualifier?: string) => ({
  invokedFunctionArn: qualifier === undefined ? FUNCTION : `${FUNCTION}:${qualifier}`,
});
const gates = { target: uniqueName('target'), runbook: uniqueName('runbook'), cron: uniqueName('cron') };
const grantees = new Map<string, string[]>([
  [`open_${gates.target}`, [BOB.arn]],
  [`open_${gates.runbook}`, [BOB.arn]],
  [BREAK_GLASS_ALIAS, [BOB.arn]],
]);
const gateDeps: GateDeps = {
  db: deps.db,
  clock,
  sts: stsCallerIdentity(inject('components').sts.endpoint),
  signers: { trustedAccounts: [ACCOUNT], grantees },
};
const runbooks = new Map([[gates.runbook, `sluice-${gates.runbook}-0123456789`]]);
const BREAK_GLASS_DOC = `sluice-break-glass-${gates.runbook}`;

let standIn: SsmStandIn;
/** How many times the function read an Automation execution from Systems Manager. */
let reads = 0;
let onInvoke: (name: string, payload: string) => Promise<unknown> = async () => ({});
const runbookDeps = (): RunbookDeps => {
  const read = ssmAutomationReader(standIn.client(GATE_FUNCTION));
  return {
    runbooks,
    breakGlassRunbook: BREAK_GLASS_DOC,
    readAutomation: (id) => {
      reads++;
      return read(id);
    },
  };
};
const handler = gateHandler(() => gateDeps, runbookDeps);

beforeAll(async () => {
  await registerGate(deps, { name: gates.target, default: 'closed', window: '1h' });
  const runbookGate = await registerGate(deps, {
    name: gates.runbook,
    default: 'closed',
    window: '1h',
    requireVerified: true,
  });
  standIn = await startSsmStandIn({
    identities: [BOB, REQUESTER, GATE_FUNCTION],
    documents: new Map([
      [runbooks.get(gates.runbook)!, runbookDocument(runbookGate, [BOB.arn])],
      [
        BREAK_GLASS_DOC,
        breakGlassRunbookContent({
          functionArn: `${FUNCTION}:${BREAK_GLASS_ALIAS}`,
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

/** A gate runbook execution, approved by Bob; its own invocation of the function answers `{}`. */
async function approvedExecution(gate: string): Promise<string> {
  onInvoke = async () => ({});
  const { AutomationExecutionId: id } = await standIn.client(REQUESTER).send(
    new StartAutomationExecutionCommand({
      DocumentName: runbooks.get(gate),
      Parameters: { window: ['1h'], reason: ['CHG-6'] },
    }),
  );
  await standIn
    .client(BOB)
    .send(new SendAutomationSignalCommand({ AutomationExecutionId: id, SignalType: 'Approve' }));
  await standIn.ssm.settled(id!);
  return id!;
}

/** CloudTrail's record of an ECR PutImage, as the construct's rule matches and delivers it. */
const putImage = (digest: string, pusher = 'arn:aws:iam::000000000000:user/mallory') => ({
  version: '0',
  'detail-type': 'AWS API Call via CloudTrail',
  source: 'aws.ecr',
  account: ACCOUNT,
  region: 'us-east-1',
  detail: {
    eventSource: 'ecr.amazonaws.com',
    eventName: 'PutImage',
    eventTime: new Date().toISOString(),
    userIdentity: { arn: pusher },
    responseElements: { image: { imageId: { imageDigest: digest } } },
  },
});

const digestOf = (seed: string) => `sha256:${Buffer.from(seed).toString('hex').padEnd(64, '0').slice(0, 64)}`;

/** A call as the router makes it for an invocation through `qualifier`. */
const callThrough = (qualifier?: string): GateCall => {
  const { invokedFunctionArn } = through(qualifier);
  return {
    entry: invokedEntry(invokedFunctionArn),
    invokedFunctionArn,
    deps: () => gateDeps,
    runbookDeps,
  };
};

describe('beneath the table: each handler checks its own entry (a row planted wrong is caught)', () => {
  it('the push-record handler refuses a record that came through another entry, and records no pusher', async () => {
    const digest = digestOf(uniqueName('planted-push'));
    const take = ROUTES['push-records']['push-record']!;
    for (const qualifier of [undefined, '$LATEST', SCHEDULES_ALIAS, `open_${gates.target}`, RUNBOOKS_ALIAS])
      await expect(take(putImage(digest), callThrough(qualifier))).rejects.toThrow(
        /taken only from CloudTrail through the EventBridge rule \(alias record_pushes\).*nothing was recorded/,
      );
    expect(await imagePushers(deps.db, digest)).toEqual([]);
    // Through the rule's own entry the same record is taken.
    await handler(putImage(digest), through(PUSH_RECORDS_ALIAS));
    expect(await imagePushers(deps.db, digest)).toEqual(['arn:aws:iam::000000000000:user/mallory']);
  });

  it('the claim handler refuses an unsigned gate event that came through a signed entry, and records nothing', async () => {
    clock.set(new Date().toISOString());
    const take = ROUTES.schedules.claim!;
    const claim = { gate: gates.target, action: 'open', reason: 'CHG-6', requestedBy: 'mallory' };
    for (const qualifier of [
      `open_${gates.target}`,
      BREAK_GLASS_ALIAS,
      'rollouts',
      RUNBOOKS_ALIAS,
      PUSH_RECORDS_ALIAS,
      'live',
    ])
      await expect(take(claim, callThrough(qualifier))).rejects.toThrow(
        /takes only signed requests; an unsigned claim is taken only from the gates' schedules/,
      );
    expect(await getGateRequest(deps.db, gates.target)).toBeUndefined();
    expect(await listGateAudit(deps.db, gates.target)).toEqual([]);
    // A status claim through the schedules entry or the function itself is still answered.
    for (const qualifier of [SCHEDULES_ALIAS, undefined, '$LATEST', '7']) {
      const answer = (await take(
        { gate: gates.target, action: 'status' },
        callThrough(qualifier),
      )) as GateRequestResult;
      expect(answer.outcome).toBe('status');
    }
  });

  it('the console-approval handler refuses an execution that came through another entry, before reading Systems Manager', async () => {
    clock.set(new Date().toISOString());
    const id = await approvedExecution(gates.runbook);
    const take = ROUTES.runbooks.runbook!;
    reads = 0;
    for (const qualifier of [
      undefined,
      SCHEDULES_ALIAS,
      `close_${gates.runbook}`,
      `open_${gates.runbook}`,
      BREAK_GLASS_ALIAS,
    ])
      await expect(take({ ssmExecution: id }, callThrough(qualifier))).rejects.toThrow(
        /taken only through the gate function's runbooks entry.*nothing was recorded/,
      );
    expect(reads).toBe(0);
    expect(await runbookExecutionUse(deps.db, id)).toBeUndefined();
    expect((await gateStatus(gates.runbook, gateDeps)).status.state).toBe('closed');
    expect(await listGateAudit(deps.db, gates.runbook)).toEqual([]);
    // The refusals burnt nothing: through the runbooks entry the approval opens the gate.
    const answer = (await handler({ ssmExecution: id }, RUNBOOKS_ENTRY)) as GateRequestResult;
    expect(answer.outcome).toBe('accepted');
    expect((await gateStatus(gates.runbook, gateDeps)).status.state).toBe('open');
  });
});

/** Every entry the construct makes, and qualifiers it never makes. */
const QUALIFIERS: readonly (string | undefined)[] = [
  undefined,
  '$LATEST',
  '7',
  `open_${gates.target}`,
  `close_${gates.target}`,
  BREAK_GLASS_ALIAS,
  'rollouts',
  RUNBOOKS_ALIAS,
  PUSH_RECORDS_ALIAS,
  SCHEDULES_ALIAS,
  `open_${gates.target}:extra`,
  `OPEN_${gates.target}`,
  'open_',
  `${BREAK_GLASS_ALIAS}_2`,
];

const EXECUTION = '0123abcd-0123-4567-89ab-0123456789ab';
const REVISION = `1.0.0@sha256:${'a'.repeat(64)}`;
const urlEvent = (body: string, extra: Record<string, unknown> = {}, base64 = false) => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: '/',
  requestContext: {
    http: { method: 'POST', path: '/' },
    authorizer: { iam: { userArn: BOB.arn, accountId: ACCOUNT } },
  },
  body: base64 ? Buffer.from(body).toString('base64') : body,
  isBase64Encoded: base64,
  ...extra,
});

/** Events no entry takes: each is refused through every entry above, and nothing is written. */
const HOSTILE: Readonly<Record<string, () => unknown>> = {
  'a runbook report that is also a rollout action': () => ({
    ssmExecution: EXECUTION,
    rollout: 'fleet',
    action: 'halt',
    reason: 'INC-6',
  }),
  'a runbook report that also carries a proof and a gate request': () => ({
    ssmExecution: EXECUTION,
    gate: gates.target,
    action: 'open',
    proof: { query: 'Action=GetCallerIdentity', nonce: 'n'.repeat(24) },
  }),
  'an override with "proof": null': () => ({
    action: 'override',
    gates: [gates.target],
    revision: REVISION,
    window: '1h',
    reason: 'INC-6',
    proof: null,
  }),
  'a gate request with "proof": null': () => ({ gate: gates.target, action: 'open', proof: null }),
  'an array of gate requests': () => [{ gate: gates.target, action: 'open' }],
  'a gate request hiding a proof under "__proto__" (as JSON.parse makes it)': () =>
    JSON.parse(
      `{"__proto__":{"proof":{"query":"q","nonce":"${'n'.repeat(24)}"}},"gate":"${gates.target}","action":"open"}`,
    ) as unknown,
  'a gate request with a "constructor" key': () =>
    JSON.parse(`{"gate":"${gates.target}","action":"open","constructor":{"name":"Object"}}`) as unknown,
  'a URL-shaped event whose body is unsigned, with a runbook id and a gate request beside it': () =>
    urlEvent(JSON.stringify({ gate: gates.target, action: 'open' }), {
      ssmExecution: EXECUTION,
      gate: gates.target,
      action: 'open',
    }),
  'a URL-shaped event with a base64 body of an unsigned override': () =>
    urlEvent(
      JSON.stringify({
        action: 'override',
        gates: [gates.target],
        revision: REVISION,
        window: '1h',
        reason: 'x',
      }),
      {},
      true,
    ),
  'a URL-shaped event wrapping a push record': () =>
    urlEvent('{}', putImage(digestOf('url-wrapped')) as unknown as Record<string, unknown>),
  'an unsigned override claim': () => ({
    action: 'override',
    gates: [gates.target],
    revision: REVISION,
    window: '1h',
    reason: 'INC-6',
  }),
  'a push record carrying a runbook id (through any entry but the rule’s)': () => ({
    ...putImage(digestOf('with-runbook')),
    ssmExecution: EXECUTION,
  }),
};

/** The entries where an event is taken by design (and so not an attack there). */
const TAKEN_THROUGH: Readonly<Record<string, readonly (string | undefined)[]>> = {
  'a push record carrying a runbook id (through any entry but the rule’s)': [PUSH_RECORDS_ALIAS],
};

describe('the table: what no entry takes is refused through every entry, and nothing is written', () => {
  it.each(Object.keys(HOSTILE))('%s', async (name) => {
    reads = 0;
    const taken = TAKEN_THROUGH[name] ?? [];
    for (const qualifier of QUALIFIERS.filter((q) => !taken.includes(q))) {
      const outcome = await handler(HOSTILE[name]!(), through(qualifier)).then(
        (answer) => answer,
        (error: unknown) => error as Error,
      );
      const where = `${name} through ${qualifier ?? 'the unqualified function'}`;
      if (outcome instanceof Error) {
        // Refused on what the event is, never for want of a service it should not reach.
        expect(outcome.message, where).not.toMatch(/STS endpoint|does not exist: nothing changed/);
      } else {
        // Only an entry with a function URL answers (with a refusal) rather than throwing.
        expect(
          (outcome as FunctionUrlAnswer).statusCode,
          `${where}: ${JSON.stringify(outcome)}`,
        ).toBeGreaterThanOrEqual(400);
        expect(
          ['open_', 'close_', 'break_glass', 'rollouts'].some((p) => qualifier?.startsWith(p)),
          where,
        ).toBe(true);
      }
    }
    expect(reads, 'Systems Manager read').toBe(0);
    expect(await listGateAudit(deps.db, gates.target)).toEqual([]);
    expect(await getGateRequest(deps.db, gates.target)).toBeUndefined();
    for (const seed of ['url-wrapped', 'with-runbook'])
      expect(await imagePushers(deps.db, digestOf(seed))).toEqual([]);
  });

  it('odd qualifiers name the entry the handlers beneath read: the same alias, or none', () => {
    expect(invokedEntry(`${FUNCTION}:open_${gates.target}:extra`).kind).toBe('gate-request');
    for (const qualifier of [`OPEN_${gates.target}`, 'open_', `${BREAK_GLASS_ALIAS}_2`, 'record-pushes'])
      expect(invokedEntry(`${FUNCTION}:${qualifier}`).kind, qualifier).toBe('unknown');
    for (const qualifier of ['$LATEST', '7', undefined])
      expect(invokedEntry(through(qualifier).invokedFunctionArn).kind, String(qualifier)).toBe('function');
  });
});

describe("the construct's senders are still taken where it sends them", () => {
  it("a gate schedule's firing through the schedules entry is recorded", async () => {
    const firedAt = new Date();
    firedAt.setUTCMinutes(0, 0, 0);
    clock.set(new Date(firedAt.getTime() + 30_000).toISOString());
    const spec = await registerGate(deps, {
      name: gates.cron,
      default: 'open',
      window: '1h',
      schedules: [{ cron: '0 * * * ? *', action: 'close', timeZone: 'UTC' }],
    });
    const input = { ...gateScheduleInput(spec, 0), requestedAt: firedAt.toISOString() };
    expect(shapeOf(input)).toBe('claim');
    const answer = (await handler(input, through(SCHEDULES_ALIAS))) as GateRequestResult;
    expect(answer.outcome).toBe('accepted');
    expect((await listGateAudit(deps.db, gates.cron)).map((row) => row.source)).toContain('schedule');
  });

  it("the dashboard's status schedules and the console test events are taken through schedules and the function", async () => {
    clock.set(new Date().toISOString());
    for (const qualifier of [SCHEDULES_ALIAS, undefined, '$LATEST']) {
      const answer = (await handler(
        { gate: gates.target, action: 'status' },
        through(qualifier),
      )) as GateRequestResult;
      expect(answer.outcome).toBe('status');
    }
    const schema = gateTestEventSchema([
      await registerGate(deps, { name: gates.target, default: 'closed', window: '1h' }),
    ]) as {
      components: { examples: Record<string, { value: Record<string, string> }> };
    };
    const status = schema.components.examples[`${gates.target}-status`]!.value;
    expect(((await handler(status, through())) as GateRequestResult).outcome).toBe('status');
    for (const example of Object.values(schema.components.examples))
      expect(shapeOf(example.value)).toBe('claim');
  });

  it("the runbooks' invoke step, the break-glass runbook's and the ECR rule's record reach a route of their entry", () => {
    const step = invokeWithExecutionId('openGate', `${FUNCTION}:${RUNBOOKS_ALIAS}`) as {
      inputs: { Payload: string };
    };
    const report = JSON.parse(
      step.inputs.Payload.replace('{{automation:EXECUTION_ID}}', EXECUTION),
    ) as unknown;
    expect(shapeOf(report)).toBe('runbook');
    expect(ROUTES[invokedEntry(`${FUNCTION}:${RUNBOOKS_ALIAS}`).kind].runbook).toBeDefined();
    expect(ROUTES[invokedEntry(`${FUNCTION}:${BREAK_GLASS_ALIAS}`).kind].runbook).toBeDefined();
    expect(shapeOf(putImage(digestOf('rule')))).toBe('push-record');
    expect(ROUTES[invokedEntry(`${FUNCTION}:${PUSH_RECORDS_ALIAS}`).kind]['push-record']).toBeDefined();
  });
});

describe("the construct's grants: the schedules' role reaches the schedules entry only", () => {
  it("with no gate schedules, the dashboard's state schedules invoke the schedules alias, and the role may invoke nothing else", () => {
    const { template } = synth((cluster) => ({
      gates: [{ name: 'sre-approval', default: 'closed', window: Duration.hours(1) }],
      deliveries: [{ ...seedDelivery(cluster), gates: [{ name: 'sre-approval', blocks: 'all' }] }],
    }));
    const resources = template.toJSON().Resources as Record<
      string,
      { Type: string; Properties: Record<string, unknown> }
    >;
    const idOf = (type: string, match: (id: string, properties: Record<string, unknown>) => boolean) =>
      Object.entries(resources)
        .filter(([id, r]) => r.Type === type && match(id, r.Properties))
        .map(([id, r]) => [id, r.Properties] as const);
    const [[gateFunction]] = idOf('AWS::Lambda::Function', (id) => id.includes('GateFunction')) as [
      [string, unknown],
    ];
    const aliases = idOf('AWS::Lambda::Alias', (_, p) => p.Name === SCHEDULES_ALIAS);
    expect(aliases, 'the schedules alias').toHaveLength(1);
    const schedulesAlias = aliases[0]![0];
    const [[invoker]] = idOf('AWS::IAM::Role', (id) => id.includes('GateInvokerRole')) as [[string, unknown]];
    // Every schedule that invokes the gate function invokes its schedules entry.
    const targets = idOf('AWS::Scheduler::Schedule', () => true)
      .map(([, p]) => JSON.stringify((p.Target as { Arn: unknown }).Arn))
      .filter((arn) => arn.includes(gateFunction) || arn.includes(schedulesAlias));
    expect(targets.length).toBeGreaterThan(0);
    for (const arn of targets) expect(arn).toBe(JSON.stringify({ Ref: schedulesAlias }));
    // The role's invoke grant names that alias alone: not the function, whose grant covers <arn>:*.
    const grants = idOf('AWS::IAM::Policy', (_, p) => JSON.stringify(p.Roles).includes(invoker))
      .flatMap(
        ([, p]) => (p.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      )
      .filter((statement) => JSON.stringify(statement.Action).includes('lambda:InvokeFunction'));
    expect(grants.map((statement) => statement.Resource)).toEqual([{ Ref: schedulesAlias }]);
  });
});
