// The gate function's dispatch table: which entry (alias) takes which kind of invocation. Every
// other pair is refused before anything is read or written: the test's dependencies throw if a
// refused invocation so much as asks for them.
import { describe, expect, it } from 'vitest';
import { invokedEntry, type EntryKind } from '../../../functions/gate/entries.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { ROUTES } from '../../../functions/gate/routes.ts';
import { shapeOf, type Shape } from '../../../functions/gate/shapes.ts';

const ARN = 'arn:aws:lambda:eu-west-1:111122223333:function:sluice-gate';

const ENTRIES: Readonly<Record<EntryKind, string | undefined>> = {
  'gate-request': `${ARN}:open_prod`,
  'break-glass': `${ARN}:break_glass`,
  rollouts: `${ARN}:rollouts`,
  rollbacks: `${ARN}:rollbacks`,
  runbooks: `${ARN}:runbooks`,
  'push-records': `${ARN}:record_pushes`,
  schedules: `${ARN}:schedules`,
  function: undefined,
  unknown: `${ARN}:open-prod`,
};

const PROOF = { query: 'x', nonce: 'n' };
const EVENTS: Readonly<Record<Shape, unknown>> = {
  url: { requestContext: { http: { method: 'POST' } }, body: '{}' },
  'push-record': {
    'detail-type': 'AWS API Call via CloudTrail',
    source: 'aws.ecr',
    detail: { eventName: 'PutImage' },
  },
  runbook: { ssmExecution: '4105a4fc-f944-11e6-9d32-8fb2db27a909' },
  'rollout-action': { rollout: 'app', action: 'halt', reason: 'INC-1' },
  rollback: { action: 'rollback', delivery: 'app', reason: 'INC-1' },
  override: { gate: 'prod', action: 'override', reason: 'INC-1', proof: PROOF },
  proven: { gate: 'prod', action: 'open', proof: PROOF },
  claim: { gate: 'prod', action: 'open' },
};

const untouchable = () => {
  throw new Error('a refused invocation asked for the dependencies');
};
const handler = gateHandler(untouchable, untouchable);

describe('the gate function dispatches by the entry it was invoked through', () => {
  it('names each entry from the ARN Lambda gives it', () => {
    for (const [kind, arn] of Object.entries(ENTRIES)) expect(invokedEntry(arn).kind).toBe(kind);
    expect(invokedEntry(`${ARN}:close_prod`).kind).toBe('gate-request');
    expect(invokedEntry(`${ARN}:$LATEST`).kind).toBe('function');
    expect(invokedEntry(`${ARN}:17`).kind).toBe('function');
  });

  it('reads each sample event as the shape it stands for', () => {
    for (const [shape, event] of Object.entries(EVENTS)) expect(shapeOf(event)).toBe(shape);
  });

  it('takes exactly these shapes through each entry', () => {
    const taken = Object.fromEntries(
      Object.entries(ROUTES).map(([kind, row]) => [kind, Object.keys(row).sort()]),
    );
    expect(taken).toEqual({
      'gate-request': ['proven', 'url'],
      'break-glass': ['override', 'proven', 'runbook', 'url'],
      rollouts: ['claim', 'proven', 'rollout-action', 'url'],
      rollbacks: ['rollback', 'url'],
      runbooks: ['runbook'],
      'push-records': ['push-record'],
      schedules: ['claim'],
      function: ['claim'],
      unknown: [],
    });
  });

  const refused = Object.entries(ENTRIES).flatMap(([kind, arn]) =>
    (Object.keys(EVENTS) as Shape[])
      .filter((shape) => ROUTES[kind as EntryKind][shape] === undefined)
      .map((shape) => ({ kind, shape, arn })),
  );

  it.each(refused)(
    'refuses $shape through the $kind entry before reading anything',
    async ({ shape, arn }) => {
      const context = arn === undefined ? undefined : { invokedFunctionArn: arn };
      const error = (await handler(EVENTS[shape], context).then(
        () => undefined,
        (reason: unknown) => reason,
      )) as Error | undefined;
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).not.toMatch(/asked for the dependencies/);
      expect(error!.message).toMatch(/entry|break-glass override|nothing was recorded|no function URL/);
    },
  );

  it('refuses a console approval reported through any entry but runbooks, naming both', async () => {
    for (const kind of ['gate-request', 'rollouts', 'schedules', 'function', 'push-records'] as const) {
      const arn = ENTRIES[kind];
      await expect(
        handler(EVENTS.runbook, arn === undefined ? undefined : { invokedFunctionArn: arn }),
      ).rejects.toThrow(/taken only through the gate function's runbooks entry.*nothing was recorded/);
    }
  });

  it('refuses an unsigned claim through an entry made for signed requests', async () => {
    await expect(handler(EVENTS.claim, { invokedFunctionArn: ENTRIES['gate-request'] })).rejects.toThrow(
      /the open_prod entry takes only signed requests; an unsigned claim is taken only from the gates' schedules/,
    );
  });

  it('answers a URL request through an entry without a URL with a refusal, not a dispatch', async () => {
    await expect(handler(EVENTS.url, { invokedFunctionArn: ENTRIES.schedules })).rejects.toThrow(
      /the schedules entry has no function URL/,
    );
  });
});
