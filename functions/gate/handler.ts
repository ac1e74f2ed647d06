import { gateDepsFromEnvironment, runbookDepsFromEnvironment } from '../core/environment.ts';
import type { RunbookDeps } from '../core/approvals/runbook-approval.ts';
import { invokedEntry } from './entries.ts';
import { logger, logRefusal } from './report.ts';
import { route, type GateAnswer, type GateFunctionDeps } from './routes.ts';
import { shapeOf } from './shapes.ts';

export type { GateFunctionDeps } from './routes.ts';

/** What the function needs of Lambda's context: the ARN it was invoked as (with the alias). */
export interface GateInvocation {
  readonly invokedFunctionArn?: string;
}

/**
 * The gate function for given dependencies (tests inject a clock, and the runbooks' SSM client).
 * The entry an invocation came through decides what it may ask (routes.ts): a signed gate request
 * through `<action>_<gate>`, an override through `break_glass`, a rollout action through
 * `rollouts`, a runbook's report through `runbooks`, a push record through `record_pushes`, an
 * unsigned claim through `schedules` or the function itself. Anything else is refused, and nothing
 * is written.
 */
export function gateHandler(
  deps: () => GateFunctionDeps,
  runbookDeps: () => RunbookDeps = runbookDepsFromEnvironment,
): (event: unknown, context?: GateInvocation) => Promise<GateAnswer> {
  return async (event, context) => {
    const invokedFunctionArn = context?.invokedFunctionArn;
    try {
      return await route(event, shapeOf(event), {
        entry: invokedEntry(invokedFunctionArn),
        invokedFunctionArn,
        deps,
        runbookDeps,
      });
    } catch (error) {
      logRefusal(error, invokedFunctionArn);
      throw error;
    }
  };
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
