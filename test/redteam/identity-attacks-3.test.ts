// Red team, identity (third round): one role counted as two approvers, or let approve its own
// push, because the role written with its path (as Systems Manager may record a runbook approver:
// by the IAM ARN its Approvers list names, which signers.ts accepts as a signer) and the same
// role's session (as STS and CloudTrail name it, without the path) were two approver keys. The
// gate handler on DynamoDB Local; for the runbook, the SSM stand-in, which verifies SigV4 and
// records each approver as its signer's ARN: one test identity's ARN is the role's own, standing
// for that record.
import { randomBytes } from 'node:crypto';
import { SendAutomationSignalCommand, StartAutomationExecutionCommand } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AutomationDocument } from '../../dev/ssm-endpoint.ts';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';
import { ssmAutomationReader } from '../../functions/core/aws/ssm-automation.ts';
import { approverKey } from '../../functions/core/access/approver-key.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { handleGateEvent, type GateRequestResult } from '../../functions/core/gates/requests.ts';
import type { SignerRules } from '../../functions/core/access/signers.ts';
import { getGateRequest } from '../../functions/core/store/gates.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { engineDeps } from '../support/deliveries.ts';
import { inProcessGateDeps, registerGate } from '../support/gates.ts';
import {
  ACCOUNT,
  FUNCTION_ARN,
  GATE_FUNCTION,
  identity,
  REQUESTER,
  runbookDocument,
  startSsmStandIn,
  type SsmStandIn,
} from '../support/ssm-stand-in.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

testbed();

/** A role people assume, kept under a path (as Identity Center's roles and many teams' are). */
const APPROVER_ROLE = `arn:aws:iam::${ACCOUNT}:role/teams/Approver`;
/** An approval recorded as the role itself: the ARN the runbook's Approvers list names. */
const AS_LISTED = identity('as-listed', APPROVER_ROLE);
/** A session of the same role, named as whoever assumed it liked: what STS answers for it. */
const AS_SESSION = identity('as-session', `arn:aws:sts::${ACCOUNT}:assumed-role/Approver/mallory-as-bob`);

describe('approverKey: a role with a path and its sessions are one approver', () => {
  it('the role ARN Systems Manager records and the session STS names count once', () => {
    expect(approverKey(APPROVER_ROLE, {})).toBe(approverKey(AS_SESSION.arn, {}));
    expect(approverKey(`arn:aws:iam::${ACCOUNT}:role/a/b/APPROVER`, {})).toBe(
      approverKey(AS_SESSION.arn, {}),
    );
    // The same name in another account is another role.
    expect(approverKey('arn:aws:iam::111111111111:role/teams/Approver', {})).not.toBe(
      approverKey(AS_SESSION.arn, {}),
    );
  });
});

describe('a two-person runbook approved by one role, once as listed and once as a session', () => {
  const deps = engineDeps();
  const gate = uniqueName('pathrole');
  const runbooks = new Map([[gate, `sluice-${gate}-0123456789`]]);
  const signers: SignerRules = {
    trustedAccounts: [ACCOUNT],
    grantees: new Map([[`open_${gate}`, [APPROVER_ROLE]]]),
  };
  const gateDeps = { ...inProcessGateDeps(deps), signers };
  const results = new Map<string, { result?: GateRequestResult; error?: string }>();
  let standIn: SsmStandIn;
  const handler = gateHandler(
    () => gateDeps,
    () => ({ runbooks, readAutomation: ssmAutomationReader(standIn.client(GATE_FUNCTION)) }),
  );

  beforeAll(async () => {
    const spec = await registerGate(deps, { name: gate, default: 'closed', window: '1h', approvers: 2 });
    standIn = await startSsmStandIn({
      identities: [AS_LISTED, AS_SESSION, REQUESTER, GATE_FUNCTION],
      documents: new Map<string, AutomationDocument>([
        [runbooks.get(gate)!, runbookDocument(spec, [APPROVER_ROLE])],
      ]),
      invoke: async (functionName, payload) => {
        expect(functionName).toBe(FUNCTION_ARN);
        const { ssmExecution } = JSON.parse(payload) as { ssmExecution: string };
        try {
          const result = (await handler(JSON.parse(payload) as object, {
            invokedFunctionArn: functionName,
          })) as GateRequestResult;
          results.set(ssmExecution, { result });
          return result;
        } catch (error) {
          results.set(ssmExecution, { error: (error as Error).message });
          throw error;
        }
      },
    });
  });
  afterAll(() => standIn.close());

  const signal = (who: TestIdentity, id: string) =>
    standIn
      .client(who)
      .send(new SendAutomationSignalCommand({ AutomationExecutionId: id, SignalType: 'Approve' }));

  it('counts one approver: the gate stays closed', async () => {
    const { AutomationExecutionId: id } = await standIn
      .client(REQUESTER)
      .send(new StartAutomationExecutionCommand({ DocumentName: runbooks.get(gate), Parameters: {} }));
    await signal(AS_LISTED, id!);
    await signal(AS_SESSION, id!);
    await standIn.ssm.settled(id!);
    const outcome = results.get(id!);
    expect(outcome?.error).toBeUndefined();
    expect(outcome?.result).toMatchObject({ outcome: 'pending', status: { state: 'closed' } });
    expect(outcome?.result?.pendingApprovals?.approvals).toHaveLength(1);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
  });
});

/** CloudTrail's record of an ECR PutImage call by `pusher`, as EventBridge delivers it. */
const putImage = (pusher: string, digest: string) => ({
  'detail-type': 'AWS API Call via CloudTrail',
  source: 'aws.ecr',
  detail: {
    eventName: 'PutImage',
    eventTime: '2026-06-01T08:55:00Z',
    userIdentity: { arn: pusher },
    responseElements: { image: { imageId: { imageDigest: digest } } },
  },
});
const VIA_RULE = {
  invokedFunctionArn: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:sluice-gate:record_pushes`,
};

describe('preventSelfApproval: the pusher approving as the role its runbook lists', () => {
  async function pushedBy(pusher: string, spec: Record<string, unknown> = {}) {
    const deps = engineDeps();
    const gate = uniqueName('pathpush');
    await registerGate(deps, {
      name: gate,
      default: 'closed',
      window: '1h',
      approval: 'revision',
      preventSelfApproval: true,
      ...spec,
    });
    const gateDeps = inProcessGateDeps(deps);
    const digest = `sha256:${randomBytes(32).toString('hex')}`;
    expect(await gateHandler(() => gateDeps)(putImage(pusher, digest), VIA_RULE)).toEqual({
      recorded: { digest, pusher },
    });
    // The runbook's approval, as handleRunbookApproval hands it on: the principal Systems Manager recorded.
    const approveAs = (principal: string) =>
      handleGateEvent(
        parseGateEvent({ gate, action: 'open', revision: `1.0.0@${digest}` }, { signed: true }),
        gateDeps,
        { principal, verified: true },
      );
    return { approveAs, stored: () => getGateRequest(deps.db, gate) };
  }

  it('is refused: a session of the role (under a path) pushed the digest', async () => {
    const { approveAs, stored } = await pushedBy(AS_SESSION.arn);
    await expect(approveAs(APPROVER_ROLE)).rejects.toThrow(/refuses approvals from the pusher/);
    expect(await stored()).toBeUndefined();
  });

  it('is refused: an Identity Center user of that permission set pushed it (the record names no person)', async () => {
    const set = 'AWSReservedSSO_Deployer_0123456789abcdef';
    const { approveAs, stored } = await pushedBy(`arn:aws:sts::${ACCOUNT}:assumed-role/${set}/alice`);
    await expect(
      approveAs(`arn:aws:iam::${ACCOUNT}:role/aws-reserved/sso.amazonaws.com/eu-west-1/${set}`),
    ).rejects.toThrow(/refuses approvals from the pusher/);
    expect(await stored()).toBeUndefined();
  });

  it('is refused: a person of a sessionNamedRoles role pushed it', async () => {
    const people = `arn:aws:iam::${ACCOUNT}:role/people/Engineer`;
    const { approveAs, stored } = await pushedBy(`arn:aws:sts::${ACCOUNT}:assumed-role/Engineer/alice`, {
      sessionNamedRoles: [people],
    });
    await expect(approveAs(people)).rejects.toThrow(/refuses approvals from the pusher/);
    expect(await stored()).toBeUndefined();
  });

  it('holds for what it should not refuse: another role, and an IAM user of the same name', async () => {
    const { approveAs } = await pushedBy(AS_SESSION.arn);
    await expect(approveAs(`arn:aws:iam::${ACCOUNT}:role/teams/Reviewer`)).resolves.toMatchObject({
      outcome: 'accepted',
    });
    const { approveAs: asUser } = await pushedBy(AS_SESSION.arn);
    await expect(asUser(`arn:aws:iam::${ACCOUNT}:user/Approver`)).resolves.toMatchObject({
      outcome: 'accepted',
    });
  });
});
