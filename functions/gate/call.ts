// One invocation of the gate function as its routes see it (routes.ts, url-request.ts).
import type { RunbookDeps } from '../core/approvals/runbook-approval.ts';
import type { GateDeps } from '../core/gates/requests.ts';
import type { RolloutActionDeps } from '../core/reconcile/rollout-actions.ts';
import type { InvokedEntry } from './entries.ts';

/** The gate function's dependencies: the gates', and the bus a rollout action announces on. */
export type GateFunctionDeps = GateDeps & Pick<RolloutActionDeps, 'rolloutEvents'>;

/** One invocation: the entry it came through and the dependencies, made only when a route needs them. */
export interface GateCall {
  readonly entry: InvokedEntry;
  readonly invokedFunctionArn: string | undefined;
  readonly deps: () => GateFunctionDeps;
  readonly runbookDeps: () => RunbookDeps;
}
