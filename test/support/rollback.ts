// Delivery rollbacks as `sluice rollback --function` sends them: signed with a proof of the
// sender, through the gate function's rollbacks alias.
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { ROLLBACKS_ALIAS } from '../../functions/core/gates/contract.ts';
import { rollbackRequestDigest, type RollbackFields } from '../../functions/core/rollback/event.ts';
import type { RollbackResult } from '../../functions/core/rollback/request.ts';
import type { gateHandler } from '../../functions/gate/handler.ts';
import { credentialsOf, GATE_FUNCTION } from './break-glass.ts';

/** The Lambda context of an invocation through the rollbacks alias. */
export const ROLLBACKS_ENTRY = { invokedFunctionArn: `${GATE_FUNCTION}:${ROLLBACKS_ALIAS}` };

/** A signed rollback by `who` (alice by default) sent to `handler` through `entry` (the rollbacks alias). */
export async function signedRollback(
  handler: ReturnType<typeof gateHandler>,
  fields: Omit<RollbackFields, 'action'>,
  who: TestIdentity = TEST_IDENTITIES.alice,
  entry: { readonly invokedFunctionArn: string } = ROLLBACKS_ENTRY,
): Promise<RollbackResult> {
  const request: RollbackFields = { action: 'rollback', ...fields };
  const proof = await proveRequest(
    rollbackRequestDigest(request),
    GATE_FUNCTION,
    'eu-west-1',
    credentialsOf(who),
  );
  return (await handler({ ...request, proof }, entry)) as RollbackResult;
}
