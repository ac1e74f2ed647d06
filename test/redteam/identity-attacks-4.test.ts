// Red team, identity (issue 39), round 4: one person counted as two approvers, or approving their
// own push, through the sessions of roles a gate lists in `sessionNamedRoles` (whose trust policy
// sets the session name to the person: `sts:RoleSessionName` = `${aws:username}`). Real requests:
// proofs presigned with the test identities' keys, verified by the STS stand-in, sent through the
// function URL stand-in to the real gate handler on DynamoDB Local.
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { gateStatus, handleGateEvent, type GateDeps } from '../../functions/core/gates/requests.ts';
import { gateKey } from '../../functions/core/store/table-client.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { proveIdentity, type SignedGateRequest } from '../../bin/commands/signed-gate-request.ts';
import { gatedDelivery, inProcessGateDeps, signersGranting, TEST_ACCOUNT } from '../support/gates.ts';
import { REGION, startFunctionUrls, type FunctionUrls } from '../support/function-url.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
const { carol, carolAsDeveloper, carolAsDeployer, carolFederated, alice, mallory } = TEST_IDENTITIES;
const FUNCTION_ARN = `arn:aws:lambda:${REGION}:${TEST_ACCOUNT}:function:sluice-gate`;
const DEVELOPER = `arn:aws:iam::${TEST_ACCOUNT}:role/Developer`;
const DEPLOYER = `arn:aws:iam::${TEST_ACCOUNT}:role/team/Deployer`;
const APPROVER = `arn:aws:iam::${TEST_ACCOUNT}:role/Approver`;
const CAROL = `arn:aws:iam::${TEST_ACCOUNT}:user/carol`;
const IDENTITY_CENTER = `arn:aws:iam::${TEST_ACCOUNT}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Approver_0123456789abcdef`;

let deps: GateDeps;
let urls: FunctionUrls;
const granted = new Map<string, readonly string[]>();

beforeAll(async () => {
  urls = await startFunctionUrls(Object.values(TEST_IDENTITIES), () => deps);
});
afterAll(() => urls.stop());

/** A gate (with a delivery behind it) whose open entry is granted carol, her two roles and Identity Center's. */
async function gate(
  spec: Record<string, unknown>,
  grantees = [CAROL, DEVELOPER, DEPLOYER, IDENTITY_CENTER, APPROVER],
) {
  const setup = await gatedDelivery(bed, {
    start: new Date().toISOString(),
    gate: { default: 'closed', sessionNamedRoles: [DEVELOPER, DEPLOYER], ...spec },
    names: { gate: 'idattack', delivery: 'idattack', repository: 'idattack' },
  });
  granted.set(`open_${setup.gate}`, grantees);
  deps = {
    ...inProcessGateDeps(setup.deps),
    signers: signersGranting(Object.fromEntries(granted)),
  };
  return setup;
}

/** Sends `request` through its entry's function URL, proven and URL-signed by `who`; answers status and body. */
async function send(
  who: TestIdentity,
  request: SignedGateRequest,
  options: {
    /** Who signs the URL request (the caller IAM authenticates); `who` unless given. */
    readonly caller?: TestIdentity;
    /** A proof to send instead of a fresh one by `who`. */
    readonly proof?: unknown;
    /** The entry (alias) to send to; the request's own unless given. */
    readonly entry?: string;
    /** The body to send instead of the request's fields. */
    readonly body?: Record<string, unknown>;
  } = {},
) {
  const keys = (identity: TestIdentity) => ({
    accessKeyId: identity.accessKeyId,
    secretAccessKey: identity.secretAccessKey,
    ...(identity.sessionToken && { sessionToken: identity.sessionToken }),
  });
  const proof = options.proof ?? (await proveIdentity(request, FUNCTION_ARN, REGION, keys(who)));
  const url = new URL(urls.url(options.entry ?? `${request.action}_${request.gate}`));
  const body = JSON.stringify({ ...(options.body ?? request), proof });
  const signed = await new SignatureV4({
    service: 'lambda',
    region: REGION,
    credentials: keys(options.caller ?? who),
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
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, proof };
}

/** CloudTrail's record of a push of `digest` by `pusher`, through the EventBridge rule's alias. */
async function recordPush(digest: string, pusher: string) {
  await gateHandler(() => deps)(
    {
      'detail-type': 'AWS API Call via CloudTrail',
      source: 'aws.ecr',
      detail: {
        eventName: 'PutImage',
        eventTime: new Date().toISOString(),
        userIdentity: { arn: pusher },
        responseElements: { image: { imageId: { imageDigest: digest } } },
      },
    },
    { invokedFunctionArn: `${FUNCTION_ARN}:record_pushes` },
  );
}

describe('one person, two approvers, through session-named roles', () => {
  it('carol as her IAM user and as a session of a session-named role is one approver', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    const first = await send(carol, { gate: name, action: 'open', reason: 'CHG-1' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.outcome).toBe('pending');
    const second = await send(carolAsDeveloper, { gate: name, action: 'open', reason: 'CHG-1' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.outcome).toBe('pending');
    const report = await gateStatus(name, deps);
    expect(report.status.state).toBe('closed');
    expect(report.pendingApprovals?.approvals.map((a) => a.principal)).toEqual([CAROL]);
  });

  it('carol through two session-named roles is one approver', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    expect((await send(carolAsDeveloper, { gate: name, action: 'open' })).body.outcome).toBe('pending');
    const second = await send(carolAsDeployer, { gate: name, action: 'open' });
    expect(second.body.outcome, JSON.stringify(second.body)).toBe('pending');
    expect((await gateStatus(name, deps)).status.state).toBe('closed');
  });

  it("an Identity Center user and another person's session of a session-named role are two approvers", async () => {
    // The control: alice (Identity Center) and carol (Developer) are two people, and open the gate.
    const { gate: name } = await gate({ approvers: 2 });
    expect((await send(alice, { gate: name, action: 'open' })).body.outcome).toBe('pending');
    expect((await send(carolAsDeveloper, { gate: name, action: 'open' })).body.outcome).toBe('accepted');
  });

  it('an approval stored under the earlier key of an IAM user (its ARN) is still carol', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    const at = new Date().toISOString();
    await deps.db.doc.send(
      new PutCommand({
        TableName: deps.db.table,
        Item: {
          pk: gateKey(name),
          sk: 'approvals',
          version: 1,
          pending: {
            approvals: [{ principal: CAROL, at, approver: CAROL.toLowerCase() }],
            expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
          },
        },
      }),
    );
    const second = await send(carolAsDeveloper, { gate: name, action: 'open' });
    expect(second.body.outcome, JSON.stringify(second.body)).toBe('pending');
    expect((await gateStatus(name, deps)).status.state).toBe('closed');
  });
});

describe('a runbook approval recorded as the role its Approvers list names', () => {
  // Systems Manager may record an approver as the IAM ARN the runbook's Approvers list names (the
  // role, not the session that signalled): handleRunbookApproval then counts that role's ARN as
  // the approver, verified, as here. Whoever of the role's people it was, alice may be one.
  it('alice approving again through the URL as her Identity Center session is not a second approver', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    const recorded = await handleGateEvent({ gate: name, action: 'open', source: 'runbook' }, deps, {
      principal: IDENTITY_CENTER,
      verified: true,
    });
    expect(recorded.outcome).toBe('pending');
    const again = await send(alice, { gate: name, action: 'open' });
    expect(again.body.outcome, JSON.stringify(again.body)).toBe('pending');
    expect((await gateStatus(name, deps)).status.state).toBe('closed');
    // A plain role's session (mallory's), which names no person, is the second approver.
    expect((await send(mallory, { gate: name, action: 'open' })).body.outcome).toBe('accepted');
  });
});

describe('a runbook approval recorded as a session-named role, and carol', () => {
  // Developer's trust policy names its sessions for the IAM users who assume it: whoever signalled
  // the runbook as Developer may be carol.
  it('carol approving through the URL as her IAM user is not a second approver', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    await handleGateEvent({ gate: name, action: 'open', source: 'runbook' }, deps, {
      principal: DEVELOPER,
      verified: true,
    });
    const again = await send(carol, { gate: name, action: 'open' });
    expect(again.body.outcome, JSON.stringify(again.body)).toBe('pending');
    expect((await gateStatus(name, deps)).status.state).toBe('closed');
  });

  it('refuses the runbook approval, recorded as Developer, of the digest carol pushed as her IAM user', async () => {
    const setup = await gate({ approval: 'revision', preventSelfApproval: true });
    const revision = await setup.pushValue('v1');
    await recordPush(revision.split('@')[1]!, CAROL);
    await expect(
      handleGateEvent({ gate: setup.gate, action: 'open', source: 'runbook', revision }, deps, {
        principal: DEVELOPER,
        verified: true,
      }),
    ).rejects.toThrow(/preventSelfApproval.*Developer.*pushed.*carol \(user/);
    expect((await gateStatus(setup.gate, deps)).status.state).toBe('closed');
  });
});

describe('a federated user (GetFederationToken) under an account grant', () => {
  // grantGateRequests(new AccountRootPrincipal(), …) lets every principal of the account sign,
  // federated users included; STS names a federated user as its IAM user chose, never whose it is.
  it('carol as her IAM user and as a federated user she made is not two approvers', async () => {
    const { gate: name } = await gate({ approvers: 2 }, [TEST_ACCOUNT]);
    expect((await send(carol, { gate: name, action: 'open' })).body.outcome).toBe('pending');
    const again = await send(carolFederated, { gate: name, action: 'open' });
    expect(again.body.outcome, JSON.stringify(again.body)).toBe('pending');
    expect((await gateStatus(name, deps)).status.state).toBe('closed');
    // A role session (mallory's) is no federated user's IAM user: the second approver.
    expect((await send(mallory, { gate: name, action: 'open' })).body.outcome).toBe('accepted');
  });

  it('refuses a federated user approving the digest an IAM user of its account pushed', async () => {
    const setup = await gate({ approval: 'revision', preventSelfApproval: true }, [TEST_ACCOUNT]);
    const revision = await setup.pushValue('v1');
    await recordPush(revision.split('@')[1]!, CAROL);
    const answer = await send(carolFederated, { gate: setup.gate, action: 'open', revision });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(String(answer.body.message)).toMatch(
      /preventSelfApproval.*federated-user\/release-bot pushed.*carol \(user/,
    );
    expect((await gateStatus(setup.gate, deps)).status.state).toBe('closed');
  });
});

describe('preventSelfApproval across session-named roles', () => {
  it('refuses carol approving, as a session-named role, the digest she pushed as her IAM user', async () => {
    const setup = await gate({ approval: 'revision', preventSelfApproval: true });
    const revision = await setup.pushValue('v1');
    const digest = revision.split('@')[1]!;
    await recordPush(digest, CAROL);
    const answer = await send(carolAsDeployer, { gate: setup.gate, action: 'open', revision });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(String(answer.body.message)).toMatch(/preventSelfApproval/);
    expect(String(answer.body.message)).toMatch(/carol \(role Deployer, 123456789012\) pushed/);
    expect((await gateStatus(setup.gate, deps)).status.state).toBe('closed');
  });
});

describe('attacks that held (kept as regressions)', () => {
  it('a proof replayed for a second approval is refused: each proof is taken once', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    const first = await send(carol, { gate: name, action: 'open' });
    expect(first.body.outcome).toBe('pending');
    const replay = await send(carol, { gate: name, action: 'open' }, { proof: first.proof, caller: mallory });
    expect(replay.status).toBe(403);
    expect(String(replay.body.message)).toMatch(/used already/);
  });

  it("mallory calling the URL with carol's proof is refused, naming both", async () => {
    const { gate: name } = await gate({ approvers: 2 });
    const answer = await send(carol, { gate: name, action: 'open' }, { caller: mallory });
    expect(answer.status).toBe(403);
    expect(String(answer.body.message)).toContain(`signed by ${CAROL}`);
    expect(String(answer.body.message)).toContain(`by ${mallory.arn}`);
  });

  it('two sessions of one plain role (mallory, mallory-as-bob) are one approver', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    expect((await send(mallory, { gate: name, action: 'open' })).body.outcome).toBe('pending');
    const again = await send(TEST_IDENTITIES.malloryAsBob, { gate: name, action: 'open' });
    expect(again.body.outcome).toBe('pending');
  });

  it('a principal of the trusted account that was not granted the entry is refused', async () => {
    const { gate: name } = await gate({ approvers: 2 }, [CAROL]);
    const answer = await send(mallory, { gate: name, action: 'open' });
    expect(answer.status).toBe(403);
    expect(String(answer.body.message)).toMatch(/is not granted the entry open_/);
  });

  it('an override sent through a gate entry is refused, and a gate request through another gate entry', async () => {
    const { gate: name } = await gate({ approvers: 2 });
    const override = await send(
      carol,
      { gate: name, action: 'open' },
      {
        body: {
          action: 'override',
          gates: [name],
          revision: `sha256:${'a'.repeat(64)}`,
          window: '1h',
          reason: 'x',
        },
      },
    );
    expect(override.status).toBe(403);
    expect(String(override.body.message)).toMatch(/break_glass/);
    const closeEntry = await send(carol, { gate: name, action: 'open' }, { entry: `close_${name}` });
    expect(closeEntry.status).toBe(403);
    expect((await gateStatus(name, deps)).pendingApprovals).toBeUndefined();
  });
});
