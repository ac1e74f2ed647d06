// Verified identity: `sluice gate open|close --function` sends its request with a proof of who it
// is (a presigned STS GetCallerIdentity bound to the request) to the gate's own function URL; the
// gate function asks STS (the local stand-in, which checks SigV4) and records that principal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getGateRequest, listGateAudit } from '../../functions/core/store/gates.ts';
import { startAwsRecorder } from '../support/aws-recorder.ts';
import { sluice } from '../support/cli.ts';
import { engineDeps } from '../support/deliveries.ts';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { REGION, startFunctionUrls, type FunctionUrls, type TestPrincipal } from '../support/function-url.ts';
import { inProcessGateDeps, registerGate } from '../support/gates.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();
const deps = engineDeps();
const gateDeps = inProcessGateDeps(deps);

// Made-up key pairs the local stand-ins know (dev/sigv4-identity.ts): never real credentials.
// alice and bob are people of an IAM Identity Center permission set (AWS sets their session names).
const { alice, bob } = TEST_IDENTITIES;
const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
const ALICE = 'alice@example.com (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)';
const BOB = 'bob@example.com (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)';

let urls: FunctionUrls;
let recorder: Awaited<ReturnType<typeof startAwsRecorder>>;
const saved = { ...process.env };

beforeAll(async () => {
  urls = await startFunctionUrls([alice, bob], () => gateDeps);
  recorder = await startAwsRecorder({ functionUrl: (alias) => urls.url(alias) });
});
afterAll(async () => {
  process.env = saved;
  await urls.stop();
  await recorder.stop();
});

/** The CLI as `who`, with their credentials; the Lambda API (the URL lookup) is the recorder. */
async function as(
  who: TestPrincipal | { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  ...args: string[]
) {
  process.env = {
    ...saved,
    AWS_ACCESS_KEY_ID: who.accessKeyId,
    AWS_SECRET_ACCESS_KEY: who.secretAccessKey,
    AWS_REGION: REGION,
    AWS_ENDPOINT_URL_LAMBDA: recorder.url,
  };
  if (who.sessionToken) process.env.AWS_SESSION_TOKEN = who.sessionToken;
  else delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  try {
    return await sluice(...args);
  } finally {
    process.env = { ...saved };
  }
}

describe('sluice gate open --function: a signed request through the gate URL', () => {
  it('records the verified principal, not a claim, and the history shows it readably', async () => {
    const gate = uniqueName('sre');
    await registerGate(deps, { name: gate, default: 'closed', window: '1h' });
    const opened = await as(alice, 'gate', 'open', gate, '--reason', 'CHG-1', '--function', 'sluice-gate');
    expect(opened.stderr).toBe('');
    expect(opened.stdout).toContain(`gate '${gate}' is open until`);
    expect(opened.stdout).toContain(`(open by ${ALICE}: CHG-1)`);
    expect(
      recorder.requests.some((r) =>
        r.path.startsWith(`/2021-10-31/functions/sluice-gate/url?Qualifier=open_${gate}`),
      ),
    ).toBe(true);
    expect(await getGateRequest(deps.db, gate)).toMatchObject({
      requestedBy: alice.arn,
      verified: true,
      source: 'url',
      reason: 'CHG-1',
    });
    const history = await sluice('gate', 'history', gate);
    expect(history.stdout).toMatch(
      /open\s+any revision\s+1h\s+alice@example\.com \(role AWSReservedSSO_Approver_0123456789abcdef, 123456789012\)\s+url\s+accepted\s+CHG-1/,
    );
  });

  it('a wrong secret or a body altered after signing is refused by the URL; nothing is recorded', async () => {
    const gate = uniqueName('sre');
    await registerGate(deps, { name: gate, default: 'closed' });
    const before = urls.invocations;
    const forged = await as(
      {
        accessKeyId: alice.accessKeyId,
        secretAccessKey: 'not-alices-secret',
        sessionToken: alice.sessionToken,
      },
      'gate',
      'open',
      gate,
      '--url',
      urls.url(`open_${gate}`),
      '--function',
      FUNCTION_ARN,
    );
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain(`gate '${gate}': open refused by http://127.0.0.1:`);
    expect(forged.stderr).toContain('(HTTP 403): Forbidden');

    // Alice's genuine signature, replayed with another body.
    const signed = await signedRequest(alice, urls.url(`open_${gate}`), { gate, action: 'open' });
    const altered = await fetch(urls.url(`open_${gate}`), {
      method: 'POST',
      headers: signed.headers,
      body: JSON.stringify({ gate, action: 'open', window: '366d' }),
    });
    expect(altered.status).toBe(403);
    expect(urls.invocations).toBe(before);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it("another gate's or action's entry refuses the request; nothing is recorded", async () => {
    const [mine, theirs] = [uniqueName('mine'), uniqueName('theirs')];
    await registerGate(deps, { name: mine, default: 'closed' });
    await registerGate(deps, { name: theirs, default: 'closed' });
    const elsewhere = await as(
      alice,
      'gate',
      'open',
      theirs,
      '--url',
      urls.url(`open_${mine}`),
      '--function',
      FUNCTION_ARN,
    );
    expect(elsewhere.stderr).toContain(
      `(HTTP 403): this entry takes open requests for gate '${mine}', not open requests for gate '${theirs}'`,
    );
    const closeEntry = await as(
      alice,
      'gate',
      'open',
      mine,
      '--url',
      urls.url(`close_${mine}`),
      '--function',
      FUNCTION_ARN,
    );
    expect(closeEntry.stderr).toContain(
      `this entry takes close requests for gate '${mine}', not open requests`,
    );
    expect(await getGateRequest(deps.db, theirs)).toBeUndefined();
    expect(await getGateRequest(deps.db, mine)).toBeUndefined();
  });

  it('two-person rule: alice twice is one approval, bob opens it; history shows pending, pending, accepted', async () => {
    const gate = uniqueName('two');
    await registerGate(deps, { name: gate, default: 'closed', window: '1h', approvers: 2 });
    const revision = `1.3.0@sha256:${'e'.repeat(64)}`;
    const open = (who: TestPrincipal) =>
      as(who, 'gate', 'open', gate, '--revision', revision, '--function', 'sluice-gate', '--json');
    const first = JSON.parse((await open(alice)).stdout);
    expect(first).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    const again = JSON.parse((await open(alice)).stdout);
    expect(again).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    const second = JSON.parse((await open(bob)).stdout);
    expect(second).toMatchObject({
      outcome: 'accepted',
      status: { state: 'open', revision, lastRequest: { approvedBy: [alice.arn, bob.arn] } },
    });
    expect((await listGateAudit(deps.db, gate)).map((r) => r.outcome)).toEqual([
      'accepted',
      'pending',
      'pending',
    ]);

    const history = await sluice('gate', 'history', gate);
    expect(history.stdout).toContain(`${ALICE} and ${BOB}`);
    const console = await sluice('gate', 'open', gate, '--by', 'mallory');
    expect(console.code).not.toBe(0);
    expect(console.stderr).toContain(`gate '${gate}' opens on 2 verified approvals`);
  });

  it('refuses a tag for --revision, and --by with --function, before sending anything', async () => {
    const gate = uniqueName('sre');
    await registerGate(deps, { name: gate, default: 'closed' });
    const before = urls.invocations;
    const tag = await as(
      alice,
      'gate',
      'open',
      gate,
      '--revision',
      '1.3.0',
      '--url',
      urls.url(`open_${gate}`),
    );
    expect(tag.stderr).toContain('"revision": "1.3.0" does not name a digest');
    const by = await as(alice, 'gate', 'open', gate, '--by', 'bob', '--url', urls.url(`open_${gate}`));
    expect(by.stderr).toContain('--by cannot be used with --function or --url');
    expect(urls.invocations).toBe(before);
  });
});

/** A request signed as the CLI signs it (the product's signer), for replaying with other bodies. */
async function signedRequest(who: TestPrincipal, url: string, body: object) {
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const { Sha256 } = await import('@aws-crypto/sha256-js');
  const target = new URL(url);
  const signer = new SignatureV4({
    service: 'lambda',
    region: REGION,
    credentials: {
      accessKeyId: who.accessKeyId,
      secretAccessKey: who.secretAccessKey,
      ...(who.sessionToken && { sessionToken: who.sessionToken }),
    },
    sha256: Sha256,
  });
  return signer.sign({
    method: 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    port: Number(target.port),
    path: target.pathname,
    headers: { host: target.host, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
