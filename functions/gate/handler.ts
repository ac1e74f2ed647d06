import { Logger } from '@aws-lambda-powertools/logger';
import { gateDepsFromEnvironment } from '../core/environment.ts';
import { parseGateEvent } from '../core/gates/event.ts';
import { handleGateEvent, type GateDeps, type GateRequestResult } from '../core/gates/requests.ts';

const logger = new Logger({ serviceName: 'sluice-gate' });

/** The gate function for given dependencies (tests inject a clock). */
export function gateHandler(deps: () => GateDeps): (event: unknown) => Promise<GateRequestResult> {
  return async (event) => {
    const result = await handleGateEvent(parseGateEvent(event), deps());
    logger.info(result.message, { gate: result.gate, action: result.action, outcome: result.outcome });
    return result;
  };
}

/**
 * `{"gate","action":"open"|"close"|"status","window"?,"reason"?,"requestedBy"?}` from EventBridge
 * Scheduler, the console's test-event box or the CLI. A bad event fails with a message naming
 * the field, and nothing is written.
 */
export const handler = gateHandler(() =>
  gateDepsFromEnvironment({ log: (message) => logger.debug(message) }),
);
