// A request through one of the gate function's URLs: the body parsed, the caller IAM authenticated
// taken from the event, and the request given to the handler of the entry it came through.
import type {
  APIGatewayProxyStructuredResultV2 as FunctionUrlAnswer,
  LambdaFunctionURLEventWithIAMAuthorizer as FunctionUrlEvent,
} from 'aws-lambda';
import { GateEventError } from '../core/gates/event.ts';
import { BREAK_GLASS_ENTRY_HINT, handleProvenOverride } from '../core/break-glass/override-request.ts';
import { ProofRefused } from '../core/access/proof.ts';
import { handleProvenRequest } from '../core/gates/proven-request.ts';
import type { UrlCaller } from '../core/access/signers.ts';
import { handleProvenRolloutAction } from '../core/reconcile/rollout-actions.ts';
import type { EntryKind } from './entries.ts';
import { refusal } from './refusals.ts';
import { logger, logRefusal, report, reportOverride, reportRolloutAction } from './report.ts';
import type { GateCall } from './call.ts';
import { isOverride } from './shapes.ts';

type UrlRoute = (body: Record<string, unknown>, call: GateCall, caller: UrlCaller) => Promise<unknown>;

/** The entries with a function URL, and what each takes through it. */
const URL_ROUTES: Readonly<Partial<Record<EntryKind, UrlRoute>>> = {
  'gate-request': async (body, { invokedFunctionArn, deps }, caller) => {
    if (isOverride(body)) throw new ProofRefused(BREAK_GLASS_ENTRY_HINT);
    return report(await handleProvenRequest(body, 'url', invokedFunctionArn, deps(), caller), {
      caller: caller.userArn,
    });
  },
  'break-glass': async (body, { invokedFunctionArn, deps }, caller) =>
    reportOverride(await handleProvenOverride(body, 'url', invokedFunctionArn, deps(), caller), {
      caller: caller.userArn,
    }),
  rollouts: async (body, { invokedFunctionArn, deps }, caller) =>
    reportRolloutAction(await handleProvenRolloutAction(body, 'url', invokedFunctionArn, deps(), caller)),
};

/**
 * A request through a gate's function URL. The body's proof names the author, and it must be the
 * caller IAM authenticated for the URL (`requestContext.authorizer.iam`): one grantee cannot act on
 * a second identity's proof. A direct invocation by someone IAM lets invoke the alias can forge a
 * URL-shaped event, authorizer included, and the function cannot tell the two apart (Lambda's
 * context carries no mark of the URL); so the caller check only catches a real URL request whose
 * proof another principal signed, and what holds on every path is the signer check: a grantee of
 * this entry, of a trusted account (signers.ts).
 */
export async function urlRequest(event: unknown, call: GateCall): Promise<FunctionUrlAnswer> {
  const request = event as FunctionUrlEvent;
  try {
    const take = URL_ROUTES[call.entry.kind];
    if (!take) throw refusal('url', event, call.entry, call.invokedFunctionArn);
    const result = await take(parseBody(request), call, urlCallerOf(request));
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(result) };
  } catch (error) {
    logRefusal(error, call.invokedFunctionArn);
    if (error instanceof ProofRefused) return answer(403, error.message);
    if (error instanceof GateEventError) return answer(400, error.message);
    logger.error('gate request failed', { error: error as Error });
    return answer(500, `the gate request failed: ${(error as Error).message}`);
  }
}

function parseBody(event: FunctionUrlEvent): Record<string, unknown> {
  const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : event.body;
  let raw: unknown;
  try {
    raw = JSON.parse(body ?? '');
  } catch {
    throw new GateEventError(
      `the request body is not JSON: send {"gate","action","window"?,"reason"?,"revision"?,"proof"}`,
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new GateEventError('the request body must be a JSON object');
  return raw as Record<string, unknown>;
}

/** The caller IAM authenticated for the URL, as Lambda puts it in the event (payload format 2.0). */
function urlCallerOf(event: FunctionUrlEvent): UrlCaller {
  const iam = (event.requestContext as { authorizer?: { iam?: Partial<Record<string, unknown>> } }).authorizer
    ?.iam;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return { userArn: text(iam?.userArn), accountId: text(iam?.accountId), callerId: text(iam?.callerId) };
}

function answer(statusCode: number, message: string): FunctionUrlAnswer {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) };
}
