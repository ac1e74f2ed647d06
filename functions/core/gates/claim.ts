// An unsigned gate event (a claim): taken only from the gates' schedules (their own entry) or by
// invoking the function itself (the console's test box, an administrator), and recorded as
// unverified. Every other entry of the gate function takes signed requests only.
import { SCHEDULES_ALIAS } from './contract.ts';
import { entryNameOf, isFunctionItself, qualifierOf } from '../access/entry.ts';
import { parseGateEvent } from './event.ts';
import { ProofRefused } from '../access/proof.ts';
import { handleGateEvent, type GateDeps, type GateRequestResult } from './requests.ts';

/** Why an unsigned claim through `through` (an entry's name) is refused; nothing was recorded. */
export const claimRefused = (through: string): ProofRefused =>
  new ProofRefused(
    `${through} takes only signed requests; an unsigned claim is taken only from the gates' schedules (the ${SCHEDULES_ALIAS} entry) or by invoking the function itself, where it is recorded as unverified`,
  );

/** True when an unsigned claim may come through the entry of `invokedFunctionArn`. */
export const takesClaims = (invokedFunctionArn: string | undefined): boolean =>
  isFunctionItself(invokedFunctionArn) || qualifierOf(invokedFunctionArn) === SCHEDULES_ALIAS;

/**
 * Handles a claim that came through `invokedFunctionArn`: refused (ProofRefused) through any entry
 * but the schedules' or the function itself, whatever routed it here, before anything is read.
 */
export function handleClaim(
  raw: unknown,
  invokedFunctionArn: string | undefined,
  deps: GateDeps,
): Promise<GateRequestResult> {
  if (!takesClaims(invokedFunctionArn)) return Promise.reject(claimRefused(entryNameOf(invokedFunctionArn)));
  return handleGateEvent(parseGateEvent(raw), deps);
}
