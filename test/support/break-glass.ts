// Break-glass overrides as `sluice gate override --function` sends them: signed with a proof of
// the sender, through the gate function's break_glass alias.
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import {
  overrideRequestDigest,
  type OverrideFields,
} from '../../functions/core/break-glass/override-event.ts';
import type { OverrideResult } from '../../functions/core/break-glass/override-request.ts';
import type { gateHandler } from '../../functions/gate/handler.ts';

/** The gate function the proofs are bound to. */
export const GATE_FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
/** The Lambda context of an invocation through the break_glass alias. */
export const BREAK_GLASS = { invokedFunctionArn: `${GATE_FUNCTION}:break_glass` };

/** The SDK credentials of a test identity. */
export const credentialsOf = (who: TestIdentity) => ({
  accessKeyId: who.accessKeyId,
  secretAccessKey: who.secretAccessKey,
  ...(who.sessionToken && { sessionToken: who.sessionToken }),
});

/** A signed override by `who` (alice by default) sent to `handler` through break_glass. */
export async function signedOverride(
  handler: ReturnType<typeof gateHandler>,
  fields: Omit<OverrideFields, 'action'>,
  who: TestIdentity = TEST_IDENTITIES.alice,
): Promise<OverrideResult> {
  const request: OverrideFields = { action: 'override', ...fields };
  const proof = await proveRequest(
    overrideRequestDigest(request),
    GATE_FUNCTION,
    'eu-west-1',
    credentialsOf(who),
  );
  return (await handler({ ...request, proof }, BREAK_GLASS)) as OverrideResult;
}
