// Identity that AWS verifies, however the gate function is invoked: the handler on DynamoDB Local
// with the local STS stand-in (which really checks SigV4). No identity is read from the payload;
// a proof is a presigned GetCallerIdentity bound to the request, the function and a nonce.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITIES, type TestIdentity } from '../../../dev/sigv4-identity.ts';
import { proveIdentity } from '../../../bin/commands/signed-gate-request.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();
const deps = engineDeps();
const gateDeps = inProcessGateDeps(deps);
const handler = gateHandler(() => gateDeps);
const FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
const { alice, bob, mallory, malloryAsBob, carol } = TEST_IDENTITIES;

const entry = (gate: string, action = 'open') => ({ invokedFunctionArn: `${FUNCTION}:${action}_${gate}` });
const credentials = (who: TestIdentity) => ({
  accessKeyId: who.accessKeyId,
  secretAccessKey: who.secretAccessKey,
  ...(who.sessionToken && { sessionToken: who.sessionToken }),
});
type Fields = { gate: string; action: 'open' | 'close'; window?: string; reason?: string; revision?: string };
const prove = (who: TestIdentity, fields: Fields, functionArn = FUNCTION) =>
  proveIdentity(fields, functionArn, 'eu-west-1', credentials(who));

/** A direct invocation of the gate's alias with a proof, as `aws lambda invoke` would send it. */
async function invoke(who: TestIdentity, fields: Fields) {
  return handler({ ...fields, proof: await prove(who, fields) }, entry(fields.gate, fields.action));
}

/** What a caller with lambda:InvokeFunction on the alias can send: a function-URL-shaped event naming anyone. */
function forgedUrlEvent(gate: string, arn: string, body: object) {
  return {
    version: '2.0',
    requestContext: {
      http: { method: 'POST', path: '/' },
      authorizer: { iam: { userArn: arn, accessKey: 'AKIAFORGED', accountId: '123456789012' } },
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}

let trapHits = 0;
let trap: ReturnType<typeof createServer>;
let trapUrl = '';
beforeAll(async () => {
  trap = createServer((_, response) => {
    trapHits++;
    response.end(
      '{"GetCallerIdentityResponse":{"GetCallerIdentityResult":{"Arn":"arn:aws:iam::123456789012:user/forged"}}}',
    );
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => trap.close(() => resolve())));

async function twoPersonGate(extra: Record<string, unknown> = {}) {
  const gate = uniqueName('two');
  await registerGate(deps, { name: gate, default: 'closed', window: '1h', approvers: 2, ...extra });
  return gate;
}
const revision = `1.3.0@sha256:${'c'.repeat(64)}`;

describe('forged identities get nothing', () => {
  it('a function-URL-shaped event sent by direct invocation, naming alice and bob, opens nothing', async () => {
    const gate = await twoPersonGate();
    for (const arn of [alice.arn, bob.arn]) {
      const answer = (await handler(
        forgedUrlEvent(gate, arn, { gate, action: 'open', revision }),
        entry(gate),
      )) as {
        statusCode: number;
        body: string;
      };
      expect(answer.statusCode).toBe(400);
      expect(JSON.parse(answer.body).message).toContain('"proof" is missing or malformed');
    }
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it('a verified proof opens a two-person gate with the second approver, recorded as STS named them', async () => {
    const gate = await twoPersonGate();
    const first = (await invoke(alice, { gate, action: 'open', revision, reason: 'CHG-1' })) as {
      outcome: string;
    };
    expect(first.outcome).toBe('pending');
    const second = (await invoke(bob, { gate, action: 'open', revision, reason: 'CHG-1' })) as {
      outcome: string;
      status: { state: string };
    };
    expect(second).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect(await getGateRequest(deps.db, gate)).toMatchObject({
      verified: true,
      source: 'invoke',
      approvedBy: [alice.arn, bob.arn],
    });
  });

  it.each([
    [
      'another request (the proof covers a different revision)',
      { revision: `1.3.0@sha256:${'d'.repeat(64)}` },
    ],
    ['another reason', { reason: 'something else' }],
    ['another window', { window: '366d' }],
  ])('a proof made for %s is refused by STS', async (_, change) => {
    const gate = await twoPersonGate();
    const signed: Fields = { gate, action: 'open', revision, reason: 'CHG-1' };
    const proof = await prove(alice, signed);
    await expect(handler({ ...signed, ...change, proof }, entry(gate))).rejects.toThrow(
      /STS did not verify the proof \(SignatureDoesNotMatch/,
    );
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it('a proof made for another gate function is refused', async () => {
    const gate = await twoPersonGate();
    const fields: Fields = { gate, action: 'open', revision };
    const proof = await prove(alice, fields, 'arn:aws:lambda:eu-west-1:999999999999:function:other-gate');
    await expect(handler({ ...fields, proof }, entry(gate))).rejects.toThrow(/SignatureDoesNotMatch/);
  });

  it('a replayed proof is refused: each is taken once', async () => {
    const gate = await twoPersonGate();
    const fields: Fields = { gate, action: 'open', revision };
    const proof = await prove(alice, fields);
    expect(await handler({ ...fields, proof }, entry(gate))).toMatchObject({ outcome: 'pending' });
    await expect(handler({ ...fields, proof }, entry(gate))).rejects.toThrow(/the proof was used already/);
  });

  it('an expired proof, one living longer than 5 minutes, and a tampered signature are refused', async () => {
    const gate = await twoPersonGate();
    const fields: Fields = { gate, action: 'open', revision };
    const proof = await prove(alice, fields);
    const late = gateHandler(() => ({
      ...gateDeps,
      clock: manualClock(new Date(Date.now() + 6 * 60_000).toISOString()),
    }));
    await expect(late({ ...fields, proof }, entry(gate))).rejects.toThrow(/the proof has expired/);

    const longLived = { ...proof, query: proof.query.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=3600') };
    await expect(handler({ ...fields, proof: longLived }, entry(gate))).rejects.toThrow(
      /X-Amz-Expires must be 1 to 300 seconds/,
    );
    const tampered = {
      ...proof,
      query: proof.query.replace(
        /X-Amz-Signature=([0-9a-f])/,
        (_, c) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`,
      ),
    };
    await expect(handler({ ...fields, proof: tampered }, entry(gate))).rejects.toThrow(
      /SignatureDoesNotMatch/,
    );
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it('the STS host comes from the function, never from the payload', async () => {
    const gate = await twoPersonGate();
    const fields: Fields = { gate, action: 'open', revision };
    const proof = await prove(alice, fields);
    const before = trapHits;
    const elsewhere = { ...proof, url: trapUrl, host: new URL(trapUrl).host, endpoint: trapUrl };
    expect(await handler({ ...fields, proof: elsewhere }, entry(gate))).toMatchObject({ outcome: 'pending' });
    // An extra query parameter (a way to smuggle another target) is refused outright.
    const smuggled = { ...proof, query: `${proof.query}&Endpoint=${encodeURIComponent(trapUrl)}` };
    await expect(handler({ ...fields, proof: smuggled }, entry(gate))).rejects.toThrow(/not Endpoint/);
    expect(trapHits).toBe(before);
  });

  it("a proof must come through its own gate's and action's entry", async () => {
    const [mine, theirs] = [await twoPersonGate(), await twoPersonGate()];
    const fields: Fields = { gate: theirs, action: 'open', revision };
    const proof = await prove(alice, fields);
    await expect(handler({ ...fields, proof }, entry(mine))).rejects.toThrow(
      `this entry takes open requests for gate '${mine}', not open requests for gate '${theirs}'`,
    );
    await expect(handler({ ...fields, proof }, { invokedFunctionArn: FUNCTION })).rejects.toThrow(
      "send gate requests to the gate's own entry",
    );
  });
});

describe('approvers are people, not sessions', () => {
  it('two sessions of one role (mallory and mallory-as-bob) are one approver', async () => {
    const gate = await twoPersonGate();
    expect(await invoke(mallory, { gate, action: 'open', revision })).toMatchObject({ outcome: 'pending' });
    const second = await invoke(malloryAsBob, { gate, action: 'open', revision });
    expect(second).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(
      (second as { pendingApprovals: { approvals: unknown[] } }).pendingApprovals.approvals,
    ).toHaveLength(1);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
  });

  it('a role the gate lists in sessionNamedRoles counts per session; an IAM user counts by its ARN', async () => {
    const gate = await twoPersonGate({ sessionNamedRoles: ['arn:aws:iam::123456789012:role/Approver'] });
    expect(await invoke(mallory, { gate, action: 'open', revision })).toMatchObject({ outcome: 'pending' });
    expect(await invoke(malloryAsBob, { gate, action: 'open', revision })).toMatchObject({
      outcome: 'accepted',
      status: { state: 'open' },
    });
    const other = await twoPersonGate();
    expect(await invoke(carol, { gate: other, action: 'open', revision })).toMatchObject({
      outcome: 'pending',
    });
    expect(await invoke(alice, { gate: other, action: 'open', revision })).toMatchObject({
      outcome: 'accepted',
    });
  });
});
