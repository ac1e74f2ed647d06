// The gate function's logs and metrics: each answer logged with who and what, refusals as warnings.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { OverrideResult } from '../core/break-glass/override-request.ts';
import type { GateRequestResult } from '../core/gates/requests.ts';
import { SignerRefused } from '../core/access/signers.ts';
import type { RolloutActionResult } from '../core/reconcile/rollout-actions.ts';
import { GATE_METRICS, recordGateMetrics, recordOverrideMetrics } from './metrics.ts';

export const logger = new Logger({ serviceName: 'sluice-gate' });
const metrics = new Metrics({ namespace: GATE_METRICS.namespace, serviceName: GATE_METRICS.service });

/** Logs a request's result and records its metrics. */
export function report(result: GateRequestResult, fields: Record<string, unknown> = {}): GateRequestResult {
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
export function reportOverride(result: OverrideResult, fields: Record<string, unknown> = {}): OverrideResult {
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
export function reportRolloutAction(result: RolloutActionResult): RolloutActionResult {
  logger.info(result.message, {
    rollout: result.rollout,
    action: result.action,
    by: result.record.by,
    generation: result.record.generation,
    phase: result.state.phase,
  });
  return result;
}

/** A refused signer is logged as a warning naming who signed, who called (through the URL) and the entry. */
export function logRefusal(error: unknown, invokedFunctionArn: string | undefined): void {
  if (error instanceof SignerRefused)
    logger.warn(error.message, {
      refused: true,
      signer: error.signer,
      ...(error.caller !== undefined && { caller: error.caller }),
      entry: invokedFunctionArn?.split(':')[7],
    });
}
