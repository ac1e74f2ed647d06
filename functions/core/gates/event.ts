import { parseDuration } from '../config/index.ts';
import type { GateAction } from '../config/index.ts';
import type { RequestSource } from './state.ts';

/**
 * What the gate function takes, from EventBridge Scheduler, the console's test-event box and the
 * CLI alike: `{"gate":"sre-approval","action":"open","window":"1h","reason":"CHG-1234","requestedBy":"alice"}`.
 */
export interface GateEvent {
  readonly gate: string;
  readonly action: GateAction | 'status';
  readonly windowMs?: number;
  readonly reason?: string;
  readonly requestedBy?: string;
  /** Set by schedules (`<aws.scheduler.scheduled-time>`) so a late delivery is ordered by its firing time. */
  readonly requestedAt?: string;
  readonly source: RequestSource;
}

/** A gate event that cannot be acted on; nothing was written. */
export class GateEventError extends Error {
  override readonly name = 'GateEventError';
}

const FIELDS = ['gate', 'action', 'window', 'reason', 'requestedBy', 'requestedAt', 'source'];
const SOURCES: readonly RequestSource[] = ['schedule', 'console', 'cli', 'api'];
const EXAMPLE = '{"gate":"sre-approval","action":"open","window":"1h","reason":"CHG-1234"}';

function optionalString(event: Record<string, unknown>, field: string): string | undefined {
  const value = event[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new GateEventError(`"${field}" must be a string, not ${typeof value}`);
  return value;
}

/** Parses and checks a raw gate event; every problem is named, e.g. `"window": "2x" is not a duration`. */
export function parseGateEvent(raw: unknown): GateEvent {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new GateEventError(`a gate event must be a JSON object like ${EXAMPLE}`);
  const event = raw as Record<string, unknown>;
  const unknown = Object.keys(event).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    throw new GateEventError(
      `unknown field(s) ${unknown.map((k) => `"${k}"`).join(', ')}; expected ${EXAMPLE}`,
    );

  const gate = optionalString(event, 'gate');
  if (!gate) throw new GateEventError(`"gate" is missing: name the gate, e.g. ${EXAMPLE}`);
  const action = optionalString(event, 'action');
  if (action !== 'open' && action !== 'close' && action !== 'status')
    throw new GateEventError(
      `"action" must be "open", "close" or "status"${action === undefined ? ' (it is missing)' : `, not "${action}"`}`,
    );

  const window = optionalString(event, 'window');
  let windowMs: number | undefined;
  if (window !== undefined) {
    try {
      windowMs = parseDuration(window);
    } catch (error) {
      throw new GateEventError(`"window": ${(error as Error).message}`);
    }
    if (windowMs <= 0) throw new GateEventError(`"window": must be longer than zero`);
    if (action === 'status') throw new GateEventError(`"window" only applies to "open" and "close"`);
  }

  const requestedAt = optionalString(event, 'requestedAt');
  if (requestedAt !== undefined && Number.isNaN(Date.parse(requestedAt)))
    throw new GateEventError(`"requestedAt": "${requestedAt}" is not an ISO 8601 time`);

  const source = optionalString(event, 'source') ?? 'console';
  if (!SOURCES.includes(source as RequestSource))
    throw new GateEventError(`"source" must be one of ${SOURCES.join(', ')}, not "${source}"`);

  return {
    gate,
    action,
    source: source as RequestSource,
    ...(windowMs !== undefined && { windowMs }),
    ...(optionalString(event, 'reason') !== undefined && { reason: optionalString(event, 'reason') }),
    ...(optionalString(event, 'requestedBy') && { requestedBy: optionalString(event, 'requestedBy') }),
    ...(requestedAt !== undefined && { requestedAt: new Date(requestedAt).toISOString() }),
  };
}
