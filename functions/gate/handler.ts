import { Logger } from '@aws-lambda-powertools/logger';
import type {
  APIGatewayProxyStructuredResultV2 as FunctionUrlAnswer,
  LambdaFunctionURLEventWithIAMAuthorizer as FunctionUrlEvent,
} from 'aws-lambda';
import { gateDepsFromEnvironment } from '../core/environment.ts';
import { gateEntryOf } from '../core/gates/entry.ts';
import { GateEventError, parseGateEvent } from '../core/gates/event.ts';
import { handleGateEvent, type GateDeps, type GateRequestResult } from '../core/gates/requests.ts';
import {
  checkPushRecordEntry,
  isImagePushRecord,
  recordImagePush,
  type ImagePushOutcome,
} from '../core/gates/self-approval.ts';

const logger = new Logger({ serviceName: 'sluice-gate' });

/** What the function needs of Lambda's context: the ARN it was invoked as (with the alias). */
export interface GateInvocation {
  readonly invokedFunctionArn?: string;
}

/** The gate function for given dependencies (tests inject a clock). */
export function gateHandler(
  deps: () => GateDeps,
): (
  event: unknown,
  context?: GateInvocation,
) => Promise<GateRequestResult | FunctionUrlAnswer | ImagePushOutcome> {
  return async (event, context) => {
    if (isImagePushRecord(event)) {
      checkPushRecordEntry(context?.invokedFunctionArn);
      const { db, clock } = deps();
      const outcome = await recordImagePush(db, event, clock.now());
      logger.info('recorded for preventSelfApproval: an image push', { ...outcome });
      return outcome;
    }
    if (isFunctionUrlEvent(event)) return signedRequest(event, context, deps());
    const result = await handleGateEvent(parseGateEvent(event), deps());
    logger.info(result.message, { gate: result.gate, action: result.action, outcome: result.outcome });
    return result;
  };
}

function isFunctionUrlEvent(event: unknown): event is FunctionUrlEvent {
  const candidate = event as Partial<FunctionUrlEvent> | null;
  return typeof candidate?.requestContext === 'object' && typeof candidate.requestContext?.http === 'object';
}

/**
 * A request through a gate's function URL: IAM authenticated the caller (AWS_IAM auth), so the
 * verified ARN is its author. The entry names one gate and action; any other is refused.
 */
async function signedRequest(
  event: FunctionUrlEvent,
  context: GateInvocation | undefined,
  deps: GateDeps,
): Promise<FunctionUrlAnswer> {
  const caller = event.requestContext.authorizer?.iam?.userArn;
  if (!caller) return answer(403, 'the gate function URL takes signed requests only (AWS_IAM auth)');
  const entry = gateEntryOf(context?.invokedFunctionArn);
  if (!entry) return answer(403, "send gate requests to the gate's own URL (alias <action>_<gate>)");
  try {
    const body = event.isBase64Encoded
      ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
      : event.body;
    let raw: unknown;
    try {
      raw = JSON.parse(body ?? '');
    } catch {
      throw new GateEventError(
        `the request body is not JSON: send {"gate","action","window"?,"reason"?,"revision"?}`,
      );
    }
    const request = parseGateEvent(raw, { signed: true });
    const through = `this URL takes ${entry.action} requests for gate '${entry.gate}'`;
    if (request.gate !== entry.gate || (request.action !== entry.action && request.action !== 'status'))
      return answer(403, `${through}, not ${request.action} requests for gate '${request.gate}'`);
    const result = await handleGateEvent(request, deps, { principal: caller, verified: true });
    logger.info(result.message, {
      gate: result.gate,
      action: result.action,
      outcome: result.outcome,
      caller,
    });
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(result) };
  } catch (error) {
    if (error instanceof GateEventError) return answer(400, error.message);
    logger.error('gate request failed', { error: error as Error, caller });
    return answer(500, `the gate request failed: ${(error as Error).message}`);
  }
}

function answer(statusCode: number, message: string): FunctionUrlAnswer {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) };
}

/**
 * `{"gate","action":"open"|"close"|"status","window"?,"reason"?,"revision"?,"requestedBy"?}` from
 * EventBridge Scheduler or the console's test-event box (a claim, recorded as unverified), or a
 * signed request through a gate's function URL (the verified caller). A bad event fails with a
 * message naming the field, and nothing is written.
 */
export const handler = gateHandler(() =>
  gateDepsFromEnvironment({ log: (message) => logger.debug(message) }),
);
