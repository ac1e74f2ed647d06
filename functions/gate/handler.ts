import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type {
  APIGatewayProxyStructuredResultV2 as FunctionUrlAnswer,
  LambdaFunctionURLEventWithIAMAuthorizer as FunctionUrlEvent,
} from 'aws-lambda';
import { gateDepsFromEnvironment, runbookDepsFromEnvironment } from '../core/environment.ts';
import { GateEventError, parseGateEvent } from '../core/gates/event.ts';
import {
  handleProvenOverride,
  isBreakGlassEntry,
  type OverrideResult,
} from '../core/gates/override-request.ts';
import { ProofRefused } from '../core/gates/proof.ts';
import { handleProvenRequest } from '../core/gates/proven-request.ts';
import { SignerRefused, type UrlCaller } from '../core/gates/signers.ts';
import { isRolloutActionEvent, isRolloutsEntry } from '../core/gates/rollout-action-event.ts';
import {
  handleProvenRolloutAction,
  type RolloutActionDeps,
  type RolloutActionResult,
} from '../core/reconcile/rollout-actions.ts';
import { handleGateEvent, type GateDeps, type GateRequestResult } from '../core/gates/requests.ts';
import { handleRunbookOverride } from '../core/gates/runbook-override.ts';
import { handleRunbookApproval, isRunbookEvent, type RunbookDeps } from '../core/gates/runbook-approval.ts';
import {
  checkPushRecordEntry,
  isImagePushRecord,
  recordImagePush,
  type ImagePushOutcome,
} from '../core/gates/self-approval.ts';
import { GATE_METRICS, recordGateMetrics, recordOverrideMetrics } from './metrics.ts';

const logger = new Logger({ serviceName: 'sluice-gate' });
const metrics = new Metrics({ namespace: GATE_METRICS.namespace, serviceName: GATE_METRICS.service });

/** Logs a request's result and records its metrics. */
function report(result: GateRequestResult, fields: Record<string, unknown> = {}): GateRequestResult {
  // A refused console approval is an answer, not a function error: a warning says who and why.
  const level = result.outcome === 'refused' ? 'warn' : 'info';
  logger[level](result.message, {
    gate: result.gate,
    action: result.action,
    outcome: result.outcome,
    state: result.status.state,
    ...fields,
  });
  recordGateMetrics(metrics, result);
  return result;
}

/**
 * Logs a break-glass override loudly (a warning) and records its metric, which the construct alarms
 * on; a refused one (a verified runbook execution turned down) is a warning too, and no override.
 */
function reportOverride(result: OverrideResult, fields: Record<string, unknown> = {}): OverrideResult {
  logger.warn(result.message, {
    breakGlass: true,
    ...(result.outcome === 'refused' && { refused: true }),
    gates: result.overrides.map((override) => override.gate),
    revision: result.overrides[0]?.revision,
    madeBy: result.overrides[0]?.madeBy,
    endsAt: result.overrides[0]?.endsAt,
    ...fields,
  });
  recordOverrideMetrics(metrics, result);
  return result;
}

/** Logs a rollout action: who halted, resumed or rolled back which rollout, and why. */
function reportRolloutAction(result: RolloutActionResult): RolloutActionResult {
  logger.info(result.message, {
    rollout: result.rollout,
    action: result.action,
    by: result.record.by,
    generation: result.record.generation,
    phase: result.state.phase,
  });
  return result;
}

/** What the function needs of Lambda's context: the ARN it was invoked as (with the alias). */
export interface GateInvocation {
  readonly invokedFunctionArn?: string;
}

/** The gate function's dependencies: the gates', and the bus a rollout action announces on. */
export type GateFunctionDeps = GateDeps & Pick<RolloutActionDeps, 'rolloutEvents'>;

/** The gate function for given dependencies (tests inject a clock, and the runbooks' SSM client). */
export function gateHandler(
  deps: () => GateFunctionDeps,
  runbookDeps: () => RunbookDeps = runbookDepsFromEnvironment,
): (
  event: unknown,
  context?: GateInvocation,
) => Promise<
  GateRequestResult | OverrideResult | RolloutActionResult | FunctionUrlAnswer | ImagePushOutcome
> {
  return async (event, context) => {
    try {
      return await handle(event, context);
    } catch (error) {
      logRefusal(error, context);
      throw error;
    }
  };

  async function handle(
    event: unknown,
    context?: GateInvocation,
  ): Promise<
    GateRequestResult | OverrideResult | RolloutActionResult | FunctionUrlAnswer | ImagePushOutcome
  > {
    if (isImagePushRecord(event)) {
      checkPushRecordEntry(context?.invokedFunctionArn);
      const { db, clock } = deps();
      const outcome = await recordImagePush(db, event, clock.now());
      logger.info('recorded for preventSelfApproval: an image push', { ...outcome });
      return outcome;
    }
    if (isFunctionUrlEvent(event)) return urlRequest(event, context, deps());
    if (isRunbookEvent(event) && isBreakGlassEntry(context?.invokedFunctionArn)) {
      const result = await handleRunbookOverride(event, context?.invokedFunctionArn, deps(), runbookDeps());
      return reportOverride(result, { runbook: event.ssmExecution });
    }
    if (isRunbookEvent(event)) {
      const result = await handleRunbookApproval(event, deps(), runbookDeps());
      return report(result, { runbook: event.ssmExecution });
    }
    if (isRolloutsEntry(context?.invokedFunctionArn) || isRolloutActionEvent(event))
      // Only a proven action through the rollouts entry is taken (handleProvenRolloutAction says why not).
      return reportRolloutAction(
        await handleProvenRolloutAction(asRecord(event), 'invoke', context?.invokedFunctionArn, deps()),
      );
    if (isOverride(event) || isBreakGlassEntry(context?.invokedFunctionArn)) {
      // Only a proven override passes the break_glass entry; a claim is refused (parseGateEvent says why).
      if (!hasProof(event)) return report(await handleGateEvent(parseGateEvent(asOverride(event)), deps()));
      return reportOverride(await handleProvenOverride(event, 'invoke', context?.invokedFunctionArn, deps()));
    }
    return report(
      hasProof(event)
        ? await handleProvenRequest(event, 'invoke', context?.invokedFunctionArn, deps())
        : await handleGateEvent(parseGateEvent(event), deps()),
    );
  }
}

/** A refused signer is logged as a warning naming who signed, who called (through the URL) and the entry. */
function logRefusal(error: unknown, context: GateInvocation | undefined): void {
  if (error instanceof SignerRefused)
    logger.warn(error.message, {
      refused: true,
      signer: error.signer,
      ...(error.caller !== undefined && { caller: error.caller }),
      entry: context?.invokedFunctionArn?.split(':')[7],
    });
}

function isFunctionUrlEvent(event: unknown): event is FunctionUrlEvent {
  const candidate = event as Partial<FunctionUrlEvent> | null;
  return typeof candidate?.requestContext === 'object' && typeof candidate.requestContext?.http === 'object';
}

const hasProof = (event: unknown): event is Record<string, unknown> =>
  typeof event === 'object' && event !== null && 'proof' in event;

const isOverride = (event: unknown): boolean =>
  typeof event === 'object' && event !== null && (event as { action?: unknown }).action === 'override';

const asRecord = (event: unknown): Record<string, unknown> =>
  typeof event === 'object' && event !== null && !Array.isArray(event)
    ? (event as Record<string, unknown>)
    : {};

/** An event through the break_glass entry without a proof, refused as an override whatever it asks. */
const asOverride = (event: unknown): unknown =>
  typeof event === 'object' && event !== null ? { ...event, action: 'override' } : event;

/**
 * A request through a gate's function URL. The body's proof names the author, and it must be the
 * caller IAM authenticated for the URL (`requestContext.authorizer.iam`): one grantee cannot act on
 * a second identity's proof. A direct invocation by someone IAM lets invoke the alias can forge a
 * URL-shaped event, authorizer included, and the function cannot tell the two apart (Lambda's
 * context carries no mark of the URL); so the caller check only catches a real URL request whose
 * proof another principal signed, and what holds on every path is the signer check: a grantee of
 * this entry, of a trusted account (signers.ts).
 */
async function urlRequest(
  event: FunctionUrlEvent,
  context: GateInvocation | undefined,
  deps: GateFunctionDeps,
): Promise<FunctionUrlAnswer> {
  try {
    const body = event.isBase64Encoded
      ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
      : event.body;
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
    const proven = raw as Record<string, unknown>;
    const arn = context?.invokedFunctionArn;
    const caller = urlCallerOf(event);
    const calledBy = { caller: caller.userArn };
    const result = isRolloutsEntry(arn)
      ? reportRolloutAction(await handleProvenRolloutAction(proven, 'url', arn, deps, caller))
      : isOverride(proven) || isBreakGlassEntry(arn)
        ? reportOverride(await handleProvenOverride(proven, 'url', arn, deps, caller), calledBy)
        : report(await handleProvenRequest(proven, 'url', arn, deps, caller), calledBy);
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(result) };
  } catch (error) {
    logRefusal(error, context);
    if (error instanceof ProofRefused) return answer(403, error.message);
    if (error instanceof GateEventError) return answer(400, error.message);
    logger.error('gate request failed', { error: error as Error });
    return answer(500, `the gate request failed: ${(error as Error).message}`);
  }
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

/**
 * `{"gate","action":"open"|"close"|"status","window"?,"reason"?,"revision"?,"requestedBy"?}` from
 * EventBridge Scheduler or the console's test-event box (a claim, recorded as unverified), or a
 * request with a proof of its sender (`"proof"`, made by `sluice gate open --function`) through the
 * gate's function URL or a direct invocation of its alias (the principal STS verified). A bad event
 * fails with a message naming the field, and nothing is written.
 */
export const handler = gateHandler(() =>
  gateDepsFromEnvironment({ log: (message) => logger.debug(message) }),
);
