// What an invocation of the gate function asks, read from its shape alone. The entry it came
// through then decides whether that is taken there (routes.ts): the shape never picks a handler
// by itself.
import type { LambdaFunctionURLEventWithIAMAuthorizer as FunctionUrlEvent } from 'aws-lambda';
import { isRolloutActionEvent } from '../core/gates/rollout-action-event.ts';
import { isRunbookEvent } from '../core/approvals/runbook-approval.ts';
import { isImagePushRecord } from '../core/gates/self-approval.ts';

export type Shape =
  /** A request through a function URL (payload format 2.0). */
  | 'url'
  /** CloudTrail's record of an ECR PutImage, from the EventBridge rule. */
  | 'push-record'
  /** `{"ssmExecution"}`: a runbook's step reporting its execution. */
  | 'runbook'
  /** Names a rollout: a halt, resume or rollback. */
  | 'rollout-action'
  /** `"action": "override"`, signed or not. */
  | 'override'
  /** A gate request carrying a proof of its sender. */
  | 'proven'
  /** Anything else: an unsigned gate event (a schedule's, the console test box's). */
  | 'claim';

export function shapeOf(event: unknown): Shape {
  if (isFunctionUrlEvent(event)) return 'url';
  if (isImagePushRecord(event)) return 'push-record';
  if (isRunbookEvent(event)) return 'runbook';
  if (isRolloutActionEvent(event)) return 'rollout-action';
  if (isOverride(event)) return 'override';
  if (hasProof(event)) return 'proven';
  return 'claim';
}

export function isFunctionUrlEvent(event: unknown): event is FunctionUrlEvent {
  const candidate = event as Partial<FunctionUrlEvent> | null;
  return typeof candidate?.requestContext === 'object' && typeof candidate.requestContext?.http === 'object';
}

export const hasProof = (event: unknown): event is Record<string, unknown> =>
  typeof event === 'object' && event !== null && 'proof' in event;

export const isOverride = (event: unknown): boolean =>
  typeof event === 'object' && event !== null && (event as { action?: unknown }).action === 'override';

export const asRecord = (event: unknown): Record<string, unknown> =>
  typeof event === 'object' && event !== null && !Array.isArray(event)
    ? (event as Record<string, unknown>)
    : {};
