// Who signed must be who may act (issue 39, cause 1). STS answers GetCallerIdentity for any valid
// credentials of any account, so a grantee can carry a proof another identity signed: a CI role
// they may assume, a user of their own free account. On the real components (DynamoDB Local, the
// STS stand-in that checks SigV4, the function URL stand-in that checks SigV4 and hands Lambda's
// event to the real handler), every such proof is refused, naming who signed and who called, and
// nothing is recorded.
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import {
  overrideRequestDigest,
  type OverrideFields,
} from '../../functions/core/break-glass/override-event.ts';
import { gateRequestDigest, type ProvenFields } from '../../functions/core/access/proof.ts';
import { getPendingApprovals } from '../../functions/core/store/gate-approvals.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import { getGateRequest, listGateAudit } from '../../functions/core/store/gates.ts';
import { gateHandler, type GateFunctionDeps } from '../../functions/gate/handler.ts';
import { credentialsOf } from '../support/break-glass.ts';
import { engineDeps, registerDelivery } from '../support/deliveries.ts';
import { REGION, startFunctionUrls, type FunctionUrls } from '../support/function-url.ts';
import { inProcessGateDeps, registerGate, TEST_ACCOUNT } from '../support/gates.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const { alice, bob, mallory, ci, outsider, outsiderAsBob } = TEST_IDENTITIES;
const FUNCTION_ARN = `arn:aws:lambda:${REGION}:${TEST_ACCOUNT}:function:sluice-gate`;
/** The Identity Center permission set's role, as IAM names it (with its path): alice's and bob's. */
const APPROVERS = `arn:aws:iam::${TEST_ACCOUNT}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Approver_0123456789abcdef`;

const deps = engineDeps();
/** Entry → grantees, as the construct sets SLUICE_ENTRY_GRANTEES; each test grants its own gates. */
const grantees = new Map<string, readonly string[]>();
const gateDeps: GateFunctionDeps = {
  ...inProcessGateDeps(deps),
  reconcileNow: async () => {},
  signers: { trustedAccounts: [TEST_ACCOUNT], grantees },
};
const handler = gateHandler(() => gateDeps);
let urls: FunctionUrls;

beforeAll(async () => {
  urls = await startFunctionUrls([alice, bob, mallory, ci, outsider, outsiderAsBob], () => gateDeps);
});
afterAll(async () => {
  await urls.stop();
});

/** A gate request whose proof `signer` signed, invoked directly through the gate's entry. */
async function invoke(fields: ProvenFields, signer: TestIdentity) {
  const proof = await proveRequest(gateRequestDigest(fields), FUNCTION_ARN, REGION, credentialsOf(signer));
  return handler(
    { ...fields, proof },
    { invokedFunctionArn: `${FUNCTION_ARN}:${fields.action}_${fields.gate}` },
  );
}

/** `request` with a proof `signer` signed, POSTed to the entry's URL signed (SigV4) by `caller`. */
async function post(
  caller: TestIdentity,
  alias: string,
  request: object,
  digest: string,
  signer: TestIdentity,
) {
  const proof = await proveRequest(digest, FUNCTION_ARN, REGION, credentialsOf(signer));
  const body = JSON.stringify({ ...request, proof });
  const url = new URL(urls.url(alias));
  const signed = await new SignatureV4({
    service: 'lambda',
    region: REGION,
    credentials: credentialsOf(caller),
    sha256: Sha256,
  }).sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    headers: { host: url.host, 'content-type': 'application/json' },
    body,
  });
  const response = await fetch(url, { method: 'POST', headers: signed.headers, body });
  return { status: response.status, body: (await response.json()) as { message?: string } };
}

async function closedGate(spec: Record<string, unknown> = {}) {
  const gate = uniqueName('signed');
  await registerGate(deps, { name: gate, default: 'closed', window: '1h', ...spec });
  grantees.set(`open_${gate}`, [APPROVERS]);
  grantees.set(`close_${gate}`, [APPROVERS]);
  return gate;
}

describe('gate requests: the signer must be the URL caller and a grantee of the entry, of a trusted account', () => {
  it("through the URL, a grantee carrying another grantee's valid proof is refused with 403 naming both; nothing is recorded", async () => {
    const gate = await closedGate();
    const fields = { gate, action: 'open', reason: 'CHG-1' } as const;
    const answer = await post(alice, `open_${gate}`, fields, gateRequestDigest(fields), bob);
    expect(answer.status).toBe(403);
    expect(answer.body.message).toContain(
      `signed by ${bob.arn}, called through the function URL by ${alice.arn}`,
    );
    expect(answer.body.message).toContain(
      'the proof must be signed by the same principal that calls the function URL',
    );
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    // Signed and called by the same grantee, it is taken.
    const own = await post(alice, `open_${gate}`, fields, gateRequestDigest(fields), alice);
    expect(own.status).toBe(200);
    expect(await getGateRequest(deps.db, gate)).toMatchObject({
      requestedBy: alice.arn,
      verified: true,
      source: 'url',
    });
  });

  it('through the URL or by invocation, a principal not granted the entry is refused (open and close)', async () => {
    const gate = await closedGate();
    const open = { gate, action: 'open', reason: 'CHG-2' } as const;
    const byUrl = await post(mallory, `open_${gate}`, open, gateRequestDigest(open), mallory);
    expect(byUrl.status).toBe(403);
    expect(byUrl.body.message).toContain(
      `${mallory.arn} is not granted the entry open_${gate} (its grantees: ${APPROVERS})`,
    );
    await expect(invoke(open, mallory)).rejects.toThrow(
      `${mallory.arn} is not granted the entry open_${gate}`,
    );
    // A grantee of close only may not open.
    grantees.set(`open_${gate}`, []);
    await expect(invoke(open, alice)).rejects.toThrow(
      `is not granted the entry open_${gate} (no one is granted it)`,
    );
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();

    grantees.set(`open_${gate}`, [APPROVERS]);
    expect(await invoke(open, alice)).toMatchObject({ outcome: 'accepted' });
    const close = { gate, action: 'close', reason: 'CHG-3' } as const;
    const closeByUrl = await post(alice, `close_${gate}`, close, gateRequestDigest(close), mallory);
    expect(closeByUrl.status).toBe(403);
    await expect(invoke(close, mallory)).rejects.toThrow(`is not granted the entry close_${gate}`);
    await expect(invoke(close, ci)).rejects.toThrow(`${ci.arn} is not granted the entry close_${gate}`);
    expect(await getGateRequest(deps.db, gate)).toMatchObject({ action: 'open', requestedBy: alice.arn });
    expect(await listGateAudit(deps.db, gate)).toHaveLength(1);
  });

  it("a proof from another account is refused, even a role named as Identity Center's with a grantee's name", async () => {
    const gate = await closedGate();
    const fields = { gate, action: 'open', reason: 'CHG-4' } as const;
    await expect(invoke(fields, outsiderAsBob)).rejects.toThrow(
      `signed by ${outsiderAsBob.arn}: account 999999999999 is not one this stack trusts (${TEST_ACCOUNT}; trustedAccounts adds more)`,
    );
    await expect(invoke(fields, outsider)).rejects.toThrow(
      'account 999999999999 is not one this stack trusts',
    );
    // Granting the outside account's role by ARN does not make its account trusted.
    grantees.set(`open_${gate}`, [APPROVERS, 'arn:aws:iam::999999999999:role/Personal']);
    await expect(invoke(fields, outsider)).rejects.toThrow(
      'account 999999999999 is not one this stack trusts',
    );
    const byUrl = await post(alice, `open_${gate}`, fields, gateRequestDigest(fields), outsiderAsBob);
    expect(byUrl.status).toBe(403);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
  });

  it('approvers: 2 is not met by one grantee and a proof of a non-grantee or of another account', async () => {
    const gate = await closedGate({ approvers: 2 });
    const fields = { gate, action: 'open', reason: 'CAB-1' } as const;
    expect(await invoke(fields, alice)).toMatchObject({ outcome: 'pending' });
    await expect(invoke(fields, outsiderAsBob)).rejects.toThrow(
      'account 999999999999 is not one this stack trusts',
    );
    await expect(invoke(fields, mallory)).rejects.toThrow(
      `${mallory.arn} is not granted the entry open_${gate}`,
    );
    await expect(invoke(fields, ci)).rejects.toThrow(`${ci.arn} is not granted the entry open_${gate}`);
    const pending = await getPendingApprovals(deps.db, gate, new Date());
    expect(pending?.approvals.map((approval) => approval.principal)).toEqual([alice.arn]);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    // A second granted person opens it.
    expect(await invoke(fields, bob)).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
  });

  it("preventSelfApproval: the pusher's approval with a proof signed by a second identity (their CI role) is refused", async () => {
    const gate = await closedGate({ approval: 'revision', preventSelfApproval: true });
    const digest = `sha256:${'7'.repeat(64)}`;
    await handler(
      {
        'detail-type': 'AWS API Call via CloudTrail',
        source: 'aws.ecr',
        detail: {
          eventName: 'PutImage',
          eventTime: new Date().toISOString(),
          userIdentity: { arn: alice.arn },
          responseElements: { image: { imageId: { imageDigest: digest } } },
        },
      },
      { invokedFunctionArn: `${FUNCTION_ARN}:record_pushes` },
    );
    const fields = { gate, action: 'open', revision: `v1@${digest}`, reason: 'CAB-2' } as const;
    await expect(invoke(fields, alice)).rejects.toThrow(/pushed/);
    await expect(invoke(fields, ci)).rejects.toThrow(`${ci.arn} is not granted the entry open_${gate}`);
    await expect(invoke(fields, outsider)).rejects.toThrow(
      'account 999999999999 is not one this stack trusts',
    );
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
  });
});

describe('break-glass overrides: the signer must be a grantee of break_glass', () => {
  it('a proof by a non-grantee or another account is refused through the URL and by invocation; nothing is overridden', async () => {
    const gate = await closedGate();
    const delivery = uniqueName('glass');
    await registerDelivery(deps, bed, {
      name: delivery,
      repository: uniqueName('glass/app'),
      gates: [{ name: gate }],
    });
    grantees.set('break_glass', [APPROVERS]);
    const fields: OverrideFields = {
      action: 'override',
      gates: [gate],
      revision: `v9@sha256:${'9'.repeat(64)}`,
      window: '30m',
      reason: 'INC-9 hotfix',
    };
    const proofOf = (who: TestIdentity) =>
      proveRequest(overrideRequestDigest(fields), FUNCTION_ARN, REGION, credentialsOf(who));
    const entry = { invokedFunctionArn: `${FUNCTION_ARN}:break_glass` };
    await expect(handler({ ...fields, proof: await proofOf(mallory) }, entry)).rejects.toThrow(
      `the break-glass override refused: signed by ${mallory.arn}: ${mallory.arn} is not granted the entry break_glass`,
    );
    await expect(handler({ ...fields, proof: await proofOf(outsiderAsBob) }, entry)).rejects.toThrow(
      'account 999999999999 is not one this stack trusts',
    );
    const byUrl = await post(alice, 'break_glass', fields, overrideRequestDigest(fields), mallory);
    expect(byUrl.status).toBe(403);
    expect(byUrl.body.message).toContain(
      `signed by ${mallory.arn}, called through the function URL by ${alice.arn}`,
    );
    expect(await activeOverrides(deps.db, gate, new Date())).toEqual([]);
    // The grantee's own override is made.
    const own = await post(alice, 'break_glass', fields, overrideRequestDigest(fields), alice);
    expect(own.status).toBe(200);
    expect(await activeOverrides(deps.db, gate, new Date())).toMatchObject([{ madeBy: alice.arn }]);
  });
});
