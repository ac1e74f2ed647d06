// The demo's two-person approval: each approver proves who they are with a presigned STS
// GetCallerIdentity bound to the request (as `sluice gate open --function` does), sent to the gate
// function's core; the local STS stand-in checks the signatures. Two sessions of one role are one
// person; an Identity Center user is another. A gate with preventSelfApproval refuses the pusher.
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { stsCallerIdentity } from '../../functions/core/aws/sts-caller-identity.ts';
import { systemClock } from '../../functions/core/clock.ts';
import { parseGate } from '../../functions/core/config/index.ts';
import { tableFromEnvironment } from '../../functions/core/environment.ts';
import { handleProvenRequest } from '../../functions/core/gates/proven-request.ts';
import { handleGateEvent } from '../../functions/core/gates/requests.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { putGate } from '../../functions/core/store/gates.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { proveIdentity } from '../commands/signed-gate-request.ts';
import { demoSigners } from './grants.ts';
import { check, say } from './narrate.ts';

const FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
export const TWO_PERSON_GATE = 'release-board';
export const SELF_APPROVAL_GATE = 'prod-release';

export async function twoPersonApproval(stsEndpoint: string, revision: string): Promise<void> {
  const db = tableFromEnvironment();
  await putGate(
    db,
    parseGate({ name: TWO_PERSON_GATE, default: 'closed', window: '1h', approvers: 2 }),
    systemClock.now(),
  );
  const deps = {
    db,
    clock: systemClock,
    sts: stsCallerIdentity(stsEndpoint),
    signers: demoSigners([`open_${TWO_PERSON_GATE}`]),
  };
  const entry = `${FUNCTION}:open_${TWO_PERSON_GATE}`;
  const approve = async (name: keyof typeof TEST_IDENTITIES, who: TestIdentity) => {
    const fields = { gate: TWO_PERSON_GATE, action: 'open' as const, revision, reason: 'CAB-7' };
    const proof = await proveIdentity(fields, FUNCTION, 'eu-west-1', who);
    // What the gate function does with a direct invocation of its alias that carries a proof.
    const result = await handleProvenRequest({ ...fields, proof }, 'invoke', entry, deps);
    say(`${name} approves (STS verifies ${who.arn}): ${result.outcome}; ${result.message}`);
    return result;
  };
  const m1 = await approve('mallory', TEST_IDENTITIES.mallory);
  const m2 = await approve('malloryAsBob', TEST_IDENTITIES.malloryAsBob);
  check(
    m1.outcome === 'pending' && m2.outcome === 'pending' && m2.status.state === 'closed',
    'two sessions of one role (mallory, mallory-as-bob) are one approver: still closed',
    m2.message,
  );
  const claim = { gate: TWO_PERSON_GATE, action: 'open', revision, requestedBy: 'bob', source: 'api' };
  const forged = await handleGateEvent(parseGateEvent(claim), deps).then(
    () => 'accepted',
    (error: Error) => error.message,
  );
  check(forged.includes('is not verified'), `a claim to be bob is refused: ${forged}`, forged);
  const outsider = await approve('outsiderAsBob', TEST_IDENTITIES.outsiderAsBob).then(
    (result) => `${result.outcome}: ${result.message}`,
    (error: Error) => error.message,
  );
  check(
    /is not one this stack trusts/.test(outsider),
    `bob's name on an Identity Center-like role of another account is refused: ${outsider}`,
    outsider,
  );
  const opened = await approve('bob', TEST_IDENTITIES.bob);
  check(
    opened.outcome === 'accepted' &&
      opened.status.state === 'open' &&
      opened.status.lastRequest?.verified === true,
    'bob, a second verified person, opens the gate (with mallory), for that revision only',
    opened.message,
  );
}

/**
 * preventSelfApproval: CloudTrail's record of alice's ECR PutImage reaches the gate function
 * through its `record_pushes` alias (the EventBridge rule's); alice's own approval of that digest
 * is refused, naming her push, and bob's opens the gate.
 */
export async function selfApprovalRefused(stsEndpoint: string, revision: string): Promise<void> {
  const db = tableFromEnvironment();
  await putGate(
    db,
    parseGate({
      name: SELF_APPROVAL_GATE,
      default: 'closed',
      window: '1h',
      approval: 'revision',
      preventSelfApproval: true,
    }),
    systemClock.now(),
  );
  const deps = {
    db,
    clock: systemClock,
    sts: stsCallerIdentity(stsEndpoint),
    signers: demoSigners([`open_${SELF_APPROVAL_GATE}`]),
  };
  const digest = revision.slice(revision.lastIndexOf('sha256:'));
  const pushRecord = {
    'detail-type': 'AWS API Call via CloudTrail',
    source: 'aws.ecr',
    detail: {
      eventName: 'PutImage',
      eventTime: systemClock.now().toISOString(),
      userIdentity: { arn: TEST_IDENTITIES.alice.arn },
      responseElements: { image: { imageId: { imageDigest: digest } } },
    },
  };
  await gateHandler(() => deps)(pushRecord, { invokedFunctionArn: `${FUNCTION}:record_pushes` });
  say(`CloudTrail records that alice (${TEST_IDENTITIES.alice.arn}) pushed ${digest}`);
  const entry = `${FUNCTION}:open_${SELF_APPROVAL_GATE}`;
  const approve = async (who: TestIdentity) => {
    const fields = { gate: SELF_APPROVAL_GATE, action: 'open' as const, revision, reason: 'CAB-8' };
    const proof = await proveIdentity(fields, FUNCTION, 'eu-west-1', who);
    return handleProvenRequest({ ...fields, proof }, 'invoke', entry, deps);
  };
  const own = await approve(TEST_IDENTITIES.alice).then(
    (result) => `${result.outcome}: ${result.message}`,
    (error: Error) => error.message,
  );
  check(/pushed/.test(own) && !own.startsWith('accepted'), `alice may not approve her own push: ${own}`, own);
  const other = await approve(TEST_IDENTITIES.bob);
  check(
    other.outcome === 'accepted' && other.status.state === 'open',
    `bob, who did not push it, approves it: ${other.message}`,
    other.message,
  );
}
