// One invocation of the gate function as its routes see it, and what they answer.
import type { APIGatewayProxyStructuredResultV2 as FunctionUrlAnswer } from 'aws-lambda';
import type { OverrideResult } from '../core/gates/override-request.ts';
import type { GateDeps, GateRequestResult } from '../core/gates/requests.ts';
import type { RunbookDeps } from '../core/gates/runbook-approval.ts';
import type { ImagePushOutcome } from '../core/gates/self-approval.ts';
import type { RolloutActionDeps, RolloutActionResult } from '../core/reconcile/rollout-actions.ts';
import type { InvokedEntry } from './entries.ts';

/** The gate function's dependencies: the gates', and the bus a rollout action announces on. */
export type GateFunctionDeps = GateDeps & Pick<RolloutActionDeps, 'rolloutEvents'>;

export type GateAnswer =
  GateRequestResult | OverrideResult | RolloutActionResult | FunctionUrlAnswer | ImagePushOutcome;

/** One invocation: the entry it came through and the dependencies, made only when a route needs them. */
export interface GateCall {
  readonly entry: InvokedEntry;
  readonly invokedFunctionArn: string | undefined;
  readonly deps: () => GateFunctionDeps;
  readonly runbookDeps: () => RunbookDeps;
}
