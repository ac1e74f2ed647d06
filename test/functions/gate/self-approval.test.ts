// preventSelfApproval on DynamoDB Local: the gate function records who pushed each digest from
// CloudTrail's ECR PutImage record (as EventBridge delivers it), and refuses an approval of that
// digest from its pusher, naming them.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseGate } from '../../../functions/core/config/index.ts';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { imagePushers } from '../../../functions/core/store/image-pushers.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();

const MALLORY = 'arn:aws:iam::123456789012:user/mallory';
const ALICE = 'arn:aws:iam::123456789012:user/alice';
const BOB = 'arn:aws:iam::123456789012:user/bob';
const CI = 'arn:aws:sts::123456789012:assumed-role/ci-push/build-77';

/** CloudTrail's record of a PutImage call by `pusher`, as EventBridge delivers it. */
function putImageRecord(pusher: string, digest: string, extra: Record<string, unknown> = {}) {
  return {
    version: '0',
    id: randomBytes(8).toString('hex'),
    'detail-type': 'AWS API Call via CloudTrail',
    source: 'aws.ecr',
    account: '123456789012',
    time: '2026-06-01T08:55:00Z',
    region: 'eu-west-1',
    resources: [],
    detail: {
      eventVersion: '1.08',
      userIdentity: { type: 'IAMUser', arn: pusher, accountId: '123456789012' },
      eventTime: '2026-06-01T08:55:00Z',
      eventSource: 'ecr.amazonaws.com',
      eventName: 'PutImage',
      awsRegion: 'eu-west-1',
      requestParameters: { repositoryName: 'team/app', imageTag: '1.3.0' },
      responseElements: {
        image: { repositoryName: 'team/app', imageId: { imageDigest: digest, imageTag: '1.3.0' } },
      },
      ...extra,
    },
  };
}

const GATE_FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
/** How the PutImage rule invokes the gate function: through its own alias. */
const VIA_RULE = { invokedFunctionArn: `${GATE_FUNCTION}:record_pushes` };

const newDigest = () => `sha256:${randomBytes(32).toString('hex')}`;

async function selfApprovalGate(approvers = 1) {
  const clock = manualClock('2026-06-01T09:00:00Z');
  const deps = { ...engineDeps(), clock };
  const gate = uniqueName('own');
  await registerGate(deps, {
    name: gate,
    default: 'closed',
    window: '1h',
    approval: 'revision',
    approvers,
    preventSelfApproval: true,
  });
  const gateDeps = inProcessGateDeps(deps);
  const handler = gateHandler(() => gateDeps);
  const digest = newDigest();
  const revision = `1.3.0@${digest}`;
  const approve = (principal: string, rev = revision) =>
    handleGateEvent(parseGateEvent({ gate, action: 'open', revision: rev }, { signed: true }), gateDeps, {
      principal,
      verified: true,
    });
  const push = (pusher: string, d = digest, extra?: Record<string, unknown>) =>
    handler(putImageRecord(pusher, d, extra), VIA_RULE);
  return { clock, deps, gate, gateDeps, handler, digest, revision, approve, push };
}

describe('preventSelfApproval', () => {
  it("refuses the pusher's own approval, naming the pusher; someone else's opens the gate", async () => {
    const { deps, gate, digest, approve, push } = await selfApprovalGate();
    expect(await push(MALLORY)).toEqual({ recorded: { digest, pusher: MALLORY } });

    await expect(approve(MALLORY)).rejects.toThrow(
      `gate '${gate}' refuses approvals from the pusher of the revision (preventSelfApproval): mallory (user, 123456789012) pushed ${digest}`,
    );
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toEqual([]);

    const opened = await approve(ALICE);
    expect(opened).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
  });

  it('approvers: 2: the pusher is not one of the two; two others open the gate', async () => {
    const { clock, approve, push } = await selfApprovalGate(2);
    await push(MALLORY);
    expect((await approve(ALICE)).outcome).toBe('pending');
    clock.advance(60_000);
    await expect(approve(MALLORY)).rejects.toThrow(/mallory \(user, 123456789012\) pushed sha256:/);
    clock.advance(60_000);
    const second = await approve(BOB);
    expect(second).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect(second.status.lastRequest?.approvedBy).toEqual([ALICE, BOB]);
  });

  it('a digest pushed again by someone else has two pushers, neither of whom may approve it', async () => {
    const { deps, digest, approve, push } = await selfApprovalGate();
    await push(CI);
    await push(MALLORY);
    expect(await imagePushers(deps.db, digest)).toEqual([MALLORY, CI].sort());
    await expect(approve(CI)).rejects.toThrow(/build-77 \(role ci-push, 123456789012\) pushed/);
    await expect(approve(MALLORY)).rejects.toThrow(/mallory \(user, 123456789012\) pushed/);
  });

  it("compares people, not sessions: another session of the pusher's role is the pusher; another Identity Center user is not", async () => {
    const { approve, push } = await selfApprovalGate();
    await push(CI);
    await expect(approve('arn:aws:sts::123456789012:assumed-role/ci-push/mallory-as-bob')).rejects.toThrow(
      /mallory-as-bob \(role ci-push, 123456789012\) pushed sha256:\w+ \(as build-77 \(role ci-push, 123456789012\)\)/,
    );
    const sso = (user: string) =>
      `arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Release_0123456789abcdef/${user}`;
    const { approve: approveOther, push: pushOther } = await selfApprovalGate();
    await pushOther(sso('mallory'));
    await expect(approveOther(sso('mallory'))).rejects.toThrow(/mallory \(role AWSReservedSSO_Release/);
    expect((await approveOther(sso('alice'))).outcome).toBe('accepted');
  });

  it('a pusher may still approve a digest someone else pushed', async () => {
    const { approve, push } = await selfApprovalGate();
    const other = newDigest();
    await push(MALLORY);
    await push(ALICE, other);
    expect((await approve(MALLORY, `1.4.0@${other}`)).outcome).toBe('accepted');
  });

  it('a digest with no recorded push is refused until CloudTrail names its pusher', async () => {
    const { digest, approve, push } = await selfApprovalGate();
    await expect(approve(ALICE)).rejects.toThrow(
      `no push of ${digest} is recorded yet. The pusher comes from CloudTrail's ECR PutImage record`,
    );
    await push(MALLORY);
    expect((await approve(ALICE)).outcome).toBe('accepted');
  });

  it('a claim (a direct invocation naming someone) is refused: only verified approvers can be told from the pusher', async () => {
    const { gate, handler, revision, push } = await selfApprovalGate();
    await push(MALLORY);
    await expect(
      handler({ gate, action: 'open', revision, requestedBy: 'alice', source: 'console' }),
    ).rejects.toThrow(/takes verified approvals only; alice \(unverified\) \(source console\) is a claim/);
  });

  it('a push record sent by direct invocation, or through a gate entry, is refused and records nothing', async () => {
    const { deps, digest, gate, handler, approve } = await selfApprovalGate();
    // Mallory pushed the digest; before CloudTrail's record arrives she records Bob as its pusher.
    for (const context of [
      undefined,
      { invokedFunctionArn: GATE_FUNCTION },
      { invokedFunctionArn: `${GATE_FUNCTION}:open_${gate}` },
    ])
      await expect(handler(putImageRecord(BOB, digest), context)).rejects.toThrow(
        /an ECR PutImage record is taken only from CloudTrail through the EventBridge rule \(alias record_pushes\).*nothing was recorded/,
      );
    expect(await imagePushers(deps.db, digest)).toEqual([]);
    await expect(approve(MALLORY)).rejects.toThrow(/no push of sha256:\w+ is recorded yet/);
  });

  it('a failed PutImage call, or a record without a digest, records nothing', async () => {
    const { deps, digest, push } = await selfApprovalGate();
    expect(await push(MALLORY, digest, { errorCode: 'ImageAlreadyExistsException' })).toEqual({
      ignored: 'the PutImage call failed (ImageAlreadyExistsException)',
    });
    expect(await push(MALLORY, 'sha256:short')).toMatchObject({
      ignored: expect.stringContaining('no sha256 digest'),
    });
    expect(await imagePushers(deps.db, digest)).toEqual([]);
  });

  it("needs approval: revision (an unpinned approval would let the approver's own push through)", () => {
    expect(() =>
      parseGate({ name: 'own', default: 'closed', approvers: 2, preventSelfApproval: true }),
    ).toThrow(/preventSelfApproval.*needs approval: 'revision'/s);
  });
});
