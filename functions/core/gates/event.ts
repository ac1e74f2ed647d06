import { MAX_WINDOW_MS } from '../config/defaults.ts';
import { formatDuration, parseDuration } from '../config/index.ts';
import type { GateAction } from '../config/index.ts';
import type { RequestSource } from '../store/gates.ts';
import {
  MAX_REASON_LENGTH,
  MAX_REQUESTED_BY_LENGTH,
  characters,
  CLAIM_MARKERS,
  NAME_BLANKS,
  controlCharacterIn,
  reservedPrefixOf,
} from '../access/audit-text.ts';
import { isPinnableRevision } from './state.ts';

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
  /** Set by schedules (`<aws.scheduler.scheduled-time>`) only: a late delivery counts from its firing time. */
  readonly requestedAt?: string;
  readonly source: RequestSource;
  /** The revision an open request approves: `<tag>@sha256:<hex>` or `sha256:<hex>`. */
  readonly revision?: string;
  /** The deliveries an open request is for (sorted, distinct); absent: all that use the gate. */
  readonly deliveries?: readonly string[];
}

/** How many deliveries one open request may name. */
export const MAX_REQUEST_DELIVERIES = 50;
export const DELIVERY_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Why an override that reached the function without a proof (a claim) is refused. */
export const OVERRIDE_NEEDS_PROOF =
  'a break-glass override ("action": "override") takes a verified identity: send it signed with sluice gate override --function (through the gate function\'s break_glass entry, which grantBreakGlass allows), or start the break-glass runbook in the console; a direct invocation or a console test event only claims its sender, and is refused';

/** A gate event that cannot be acted on; nothing was written. */
export class GateEventError extends Error {
  override readonly name = 'GateEventError';
}

const FIELDS = [
  'gate',
  'action',
  'window',
  'reason',
  'revision',
  'deliveries',
  'requestedBy',
  'requestedAt',
  'source',
];
/** A signed request's caller is the verified principal, its time the function's clock, its source the URL. */
const SIGNED_FIELDS = ['gate', 'action', 'window', 'reason', 'revision', 'deliveries'];
const SOURCES: readonly RequestSource[] = ['schedule', 'console', 'cli', 'api'];
const EXAMPLE = '{"gate":"sre-approval","action":"open","window":"1h","reason":"CHG-1234"}';

export function optionalString(event: Record<string, unknown>, field: string): string | undefined {
  const value = event[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new GateEventError(`"${field}" must be a string, not ${typeof value}`);
  return value;
}

/** A field the audit trail records as written: one line, no control characters, at most `max` characters. */
export function auditText(event: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = optionalString(event, field);
  if (value === undefined) return undefined;
  const control = controlCharacterIn(value);
  if (control !== undefined)
    throw new GateEventError(
      `"${field}" contains the control character ${control}: the audit trail records it as one line of plain text`,
    );
  if (characters(value) > max)
    throw new GateEventError(
      `"${field}" is ${characters(value)} characters long; at most ${max} are recorded`,
    );
  return value;
}

/**
 * Parses and checks a raw gate event; every problem is named, e.g. `"window": "2x" is not a
 * duration`. A `signed` request (through a function URL) may not say who sent it, when or from where.
 */
export function parseGateEvent(raw: unknown, options: { signed?: boolean } = {}): GateEvent {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new GateEventError(`a gate event must be a JSON object like ${EXAMPLE}`);
  const event = raw as Record<string, unknown>;
  if (event.action === 'override') throw new GateEventError(OVERRIDE_NEEDS_PROOF);
  const allowed = options.signed ? SIGNED_FIELDS : FIELDS;
  const unknown = Object.keys(event).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    const claims = unknown.filter((key) => FIELDS.includes(key));
    throw new GateEventError(
      claims.length > 0 && options.signed
        ? `${claims.map((k) => `"${k}"`).join(', ')} cannot be set in a signed request: the gate function records the verified caller, its own clock and the source`
        : `unknown field(s) ${unknown.map((k) => `"${k}"`).join(', ')}; expected ${EXAMPLE}`,
    );
  }

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
    if (windowMs > MAX_WINDOW_MS)
      throw new GateEventError(
        `"window": ${window} is longer than ${formatDuration(MAX_WINDOW_MS)} (a year), the longest a request may last`,
      );
    if (action === 'status') throw new GateEventError(`"window" only applies to "open" and "close"`);
  }

  const source = options.signed ? 'url' : (optionalString(event, 'source') ?? 'console');
  if (!options.signed && !SOURCES.includes(source as RequestSource))
    throw new GateEventError(`"source" must be one of ${SOURCES.join(', ')}, not "${source}"`);
  const requestedAt = optionalString(event, 'requestedAt');
  if (requestedAt !== undefined && source !== 'schedule')
    throw new GateEventError(
      `"requestedAt" is set by the gate function's clock; only schedules send it (their firing time)`,
    );
  if (requestedAt !== undefined && Number.isNaN(Date.parse(requestedAt)))
    throw new GateEventError(`"requestedAt": "${requestedAt}" is not an ISO 8601 time`);

  const revision = optionalString(event, 'revision');
  if (revision !== undefined && action !== 'open')
    throw new GateEventError(
      `"revision" names what an open request approves; it does not apply to "${action}"`,
    );
  if (revision !== undefined && !isPinnableRevision(revision))
    throw new GateEventError(
      `"revision": "${revision}" does not name a digest: use <tag>@sha256:<64 hex> or sha256:<64 hex>, as sluice status shows it (a tag alone can move after the approval)`,
    );

  const deliveries = deliveriesOf(event, action);

  const reason = auditText(event, 'reason', MAX_REASON_LENGTH);
  const requestedBy = auditText(event, 'requestedBy', MAX_REQUESTED_BY_LENGTH);
  // A schedule's own request is rebuilt from the spec, whoever it names; nobody else may name the system.
  const reserved = requestedBy !== undefined && source !== 'schedule' && reservedPrefixOf(requestedBy);
  if (reserved)
    throw new GateEventError(
      `"requestedBy": "${requestedBy}" starts with "${reserved}", which is reserved for sluice's own requests (schedules); name yourself`,
    );

  if (requestedBy !== undefined && source !== 'schedule' && CLAIM_MARKERS.test(requestedBy))
    throw new GateEventError(
      `"requestedBy": "${requestedBy}" contains a parenthesis, which the audit trail uses to mark how a name was verified; name yourself without one`,
    );
  if (requestedBy !== undefined && source !== 'schedule' && NAME_BLANKS.test(requestedBy))
    throw new GateEventError(
      `"requestedBy": ${JSON.stringify(requestedBy)} has blanks other than single spaces between words; name yourself plainly`,
    );

  return {
    gate,
    action,
    source: source as RequestSource,
    ...(windowMs !== undefined && { windowMs }),
    ...(reason !== undefined && { reason }),
    ...(requestedBy && { requestedBy }),
    ...(requestedAt !== undefined && { requestedAt: new Date(requestedAt).toISOString() }),
    ...(revision !== undefined && { revision }),
    ...(deliveries !== undefined && { deliveries }),
  };
}

/** `deliveries`: a non-empty list of delivery names, on open requests only; sorted and distinct. */
function deliveriesOf(event: Record<string, unknown>, action: string): string[] | undefined {
  const value = event.deliveries;
  if (value === undefined || value === null) return undefined;
  if (action !== 'open')
    throw new GateEventError(
      `"deliveries" names what an open request is for; it does not apply to "${action}"`,
    );
  if (!Array.isArray(value) || value.length === 0)
    throw new GateEventError(`"deliveries" must be a non-empty list of delivery names`);
  if (value.length > MAX_REQUEST_DELIVERIES)
    throw new GateEventError(
      `"deliveries" names ${value.length} deliveries; at most ${MAX_REQUEST_DELIVERIES} (leave it out to open the gate for every delivery)`,
    );
  for (const [index, name] of value.entries())
    if (typeof name !== 'string' || !DELIVERY_NAME.test(name))
      throw new GateEventError(`"deliveries"[${index}]: ${JSON.stringify(name)} is not a delivery name`);
  return [...new Set(value as string[])].sort();
}
