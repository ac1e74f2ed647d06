// What each entry of the gate function takes. The entry an invocation came through (entries.ts)
// picks the row, the event's shape (shapes.ts) the column; a shape an entry's row does not list is
// refused (refusals.ts), whatever else it carries. Each handler still checks its own entry and
// proof: the table is the first door, not the only one.
import type { APIGatewayProxyStructuredResultV2 as FunctionUrlAnswer } from 'aws-lambda';
import { handleClaim } from '../core/gates/claim.ts';
import { handleProvenOverride, type OverrideResult } from '../core/break-glass/override-request.ts';
import { handleProvenRequest } from '../core/gates/proven-request.ts';
import type { GateRequestResult } from '../core/gates/requests.ts';
import { handleRunbookOverride } from '../core/break-glass/runbook-override.ts';
import { handleRunbookApproval, type RunbookEvent } from '../core/approvals/runbook-approval.ts';
import { recordImagePush, type ImagePushOutcome, type ImagePushRecord } from '../core/gates/self-approval.ts';
import { handleProvenRolloutAction, type RolloutActionResult } from '../core/reconcile/rollout-actions.ts';
import type { GateCall } from './call.ts';
import type { EntryKind } from './entries.ts';
import { refusal } from './refusals.ts';
import { logger, report, reportOverride, reportRolloutAction } from './report.ts';
import { asRecord, hasProof, type Shape } from './shapes.ts';
import { urlRequest } from './url-request.ts';

export type { GateCall, GateFunctionDeps } from './call.ts';

export type GateAnswer =
  GateRequestResult | OverrideResult | RolloutActionResult | FunctionUrlAnswer | ImagePushOutcome;

type Route = (event: unknown, call: GateCall) => Promise<GateAnswer>;

const claim: Route = async (event, { invokedFunctionArn, deps }) =>
  report(await handleClaim(event, invokedFunctionArn, deps()));

const provenRequest: Route = async (event, { invokedFunctionArn, deps }) =>
  report(await handleProvenRequest(asRecord(event), 'invoke', invokedFunctionArn, deps()));

const provenOverride: Route = async (event, { invokedFunctionArn, deps }) =>
  reportOverride(await handleProvenOverride(asRecord(event), 'invoke', invokedFunctionArn, deps()));

/** Through break_glass an override must be signed; an unsigned one is refused as the claim it is. */
const override: Route = (event, call) =>
  hasProof(event)
    ? provenOverride(event, call)
    : Promise.reject(refusal('claim', event, call.entry, undefined));

const rolloutAction: Route = async (event, { invokedFunctionArn, deps }) =>
  reportRolloutAction(await handleProvenRolloutAction(asRecord(event), 'invoke', invokedFunctionArn, deps()));

const runbookApproval: Route = async (event, { invokedFunctionArn, deps, runbookDeps }) =>
  report(await handleRunbookApproval(event as RunbookEvent, invokedFunctionArn, deps(), runbookDeps()), {
    runbook: (event as RunbookEvent).ssmExecution,
  });

const runbookOverride: Route = async (event, { invokedFunctionArn, deps, runbookDeps }) =>
  reportOverride(
    await handleRunbookOverride(event as RunbookEvent, invokedFunctionArn, deps(), runbookDeps()),
    { runbook: (event as RunbookEvent).ssmExecution },
  );

const recordPush: Route = async (event, { invokedFunctionArn, deps }) => {
  const { db, clock } = deps();
  const outcome = await recordImagePush(db, event as ImagePushRecord, invokedFunctionArn, clock.now());
  logger.info('recorded for preventSelfApproval: an image push', { ...outcome });
  return outcome;
};

const url: Route = (event, call) => urlRequest(event, call);

/** Each entry's row: the shapes it takes. Everything else is refused. */
export const ROUTES: Readonly<Record<EntryKind, Readonly<Partial<Record<Shape, Route>>>>> = {
  'gate-request': { url, proven: provenRequest },
  'break-glass': { url, runbook: runbookOverride, override, proven: provenOverride },
  rollouts: { url, 'rollout-action': rolloutAction, proven: rolloutAction, claim: rolloutAction },
  runbooks: { runbook: runbookApproval },
  'push-records': { 'push-record': recordPush },
  schedules: { claim },
  function: { claim },
  unknown: {},
};

/** Takes an invocation by its entry's row, or refuses it (GateEventError or ProofRefused). */
export function route(event: unknown, shape: Shape, call: GateCall): Promise<GateAnswer> {
  const take = ROUTES[call.entry.kind][shape];
  if (!take) return Promise.reject(refusal(shape, event, call.entry, call.invokedFunctionArn));
  return take(event, call);
}
