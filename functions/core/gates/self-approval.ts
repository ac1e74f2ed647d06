import type { Gate } from '../config/index.ts';
import type { GateRequest } from '../store/gates.ts';
import { imagePushers, recordImagePusher } from '../store/image-pushers.ts';
import type { TableClient } from '../store/table-client.ts';
import { approverKey, mayBeOnePerson } from '../access/approver-key.ts';
import { readablePrincipal } from '../access/caller.ts';
import { PUSH_RECORDS_ALIAS } from '../access/entry.ts';
import { GateEventError } from './event.ts';
import { digestOf } from './state.ts';

/** What the gate function takes of CloudTrail's record of an ECR `PutImage` call (through EventBridge). */
export interface ImagePushRecord {
  readonly 'detail-type': 'AWS API Call via CloudTrail';
  readonly source: 'aws.ecr';
  readonly detail: {
    readonly eventName: 'PutImage';
    readonly eventTime?: string;
    readonly errorCode?: string;
    readonly userIdentity?: { readonly arn?: string };
    readonly responseElements?: { readonly image?: { readonly imageId?: { readonly imageDigest?: string } } };
  };
}

export type ImagePushOutcome =
  { readonly recorded: { readonly digest: string; readonly pusher: string } } | { readonly ignored: string };

/** True for an EventBridge event carrying CloudTrail's record of an ECR PutImage call. */
export function isImagePushRecord(event: unknown): event is ImagePushRecord {
  const candidate = event as Partial<ImagePushRecord> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate['detail-type'] === 'AWS API Call via CloudTrail' &&
    candidate.source === 'aws.ecr' &&
    candidate.detail?.eventName === 'PutImage'
  );
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
/**
 * Refuses a push record that did not come through PUSH_RECORDS_ALIAS (the EventBridge rule's): a
 * direct invocation (whoever may invoke the unqualified function) could otherwise record a push
 * before CloudTrail's arrives, naming someone else as the pusher of the caller's own digest.
 */
export function checkPushRecordEntry(invokedFunctionArn: string | undefined): void {
  const qualifier = invokedFunctionArn?.split(':')[7];
  if (qualifier !== PUSH_RECORDS_ALIAS) throw pushRecordRefused(invokedFunctionArn);
}

/** Why a push record that came in other than through PUSH_RECORDS_ALIAS is refused. */
export const pushRecordRefused = (invokedFunctionArn: string | undefined): GateEventError =>
  new GateEventError(
    `an ECR PutImage record is taken only from CloudTrail through the EventBridge rule (alias ${PUSH_RECORDS_ALIAS}), not as ${invokedFunctionArn ?? 'a direct invocation'}; nothing was recorded`,
  );

/**
 * Records who pushed a digest, as CloudTrail names them: the principal whose credentials signed
 * the PutImage call (for `docker push`, whoever got the registry token). A record that came in
 * other than through PUSH_RECORDS_ALIAS is refused (checkPushRecordEntry), whatever routed it
 * here. A failed call, or one without a principal or digest, is ignored with the reason.
 */
export async function recordImagePush(
  db: TableClient,
  record: ImagePushRecord,
  invokedFunctionArn: string | undefined,
  now: Date,
): Promise<ImagePushOutcome> {
  checkPushRecordEntry(invokedFunctionArn);
  const { detail } = record;
  if (detail.errorCode) return { ignored: `the PutImage call failed (${detail.errorCode})` };
  const pusher = detail.userIdentity?.arn;
  if (!pusher) return { ignored: 'the PutImage record names no principal (userIdentity.arn)' };
  const digest = detail.responseElements?.image?.imageId?.imageDigest;
  if (!digest || !DIGEST.test(digest))
    return {
      ignored: 'the PutImage record names no sha256 digest (responseElements.image.imageId.imageDigest)',
    };
  await recordImagePusher(db, digest, pusher, detail.eventTime ?? now.toISOString());
  return { recorded: { digest, pusher } };
}

/**
 * `preventSelfApproval`: an open request must be verified, and its approver may not be among the
 * digest's pushers (compared by `approverKey`, so another session of the same person is the same
 * approver). A digest with no recorded push is refused too: until CloudTrail's record arrives,
 * nobody can tell who pushed it.
 */
export async function checkSelfApproval(gate: Gate, request: GateRequest, db: TableClient): Promise<void> {
  if (!gate.preventSelfApproval || request.revision === undefined) return;
  const refused = `gate '${gate.name}' refuses approvals from the pusher of the revision (preventSelfApproval)`;
  if (!request.verified)
    throw new GateEventError(
      `${refused}, so it takes verified approvals only; ${readablePrincipal(request.requestedBy, false)} (source ${request.source}) is a claim: send it with sluice gate open --function, which signs it`,
    );
  const digest = digestOf(request.revision);
  const pushers = await imagePushers(db, digest);
  if (pushers.length === 0)
    throw new GateEventError(
      `${refused}: no push of ${digest} is recorded yet. The pusher comes from CloudTrail's ECR PutImage record, which arrives minutes after the push (a trail must log management events in the repository's account and region); try again shortly`,
    );
  const approver = approverKey(request.requestedBy, gate);
  // A role recorded as itself (Systems Manager's record of a runbook approver may name the role a
  // list names) could be any person its sessions name (Identity Center, sessionNamedRoles), and a
  // federated user any IAM user of its account: for all anyone can tell, the pusher.
  const own = pushers.find(
    (pusher) => approverKey(pusher, gate) === approver || mayBeOnePerson(pusher, request.requestedBy, gate),
  );
  if (own !== undefined)
    throw new GateEventError(
      `${refused}: ${readablePrincipal(request.requestedBy, true)} pushed ${digest} (as ${readablePrincipal(own, true)}); someone else must approve it`,
    );
}
