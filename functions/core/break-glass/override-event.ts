// A break-glass override request as it reaches the gate function: its fields, checked, and the
// hash its proof of identity signs (tagged apart from gate requests', so neither proves the other).
import { createHash } from 'node:crypto';
import { formatDuration, parseDuration } from '../config/index.ts';
import { MAX_OVERRIDE_LIMIT_MS } from '../config/defaults.ts';
import { MAX_REASON_LENGTH } from '../access/audit-text.ts';
import { auditText, DELIVERY_NAME, GateEventError, optionalString } from '../gates/event.ts';
import { isPinnableRevision } from '../gates/state.ts';

/** How many gates one override request may name. */
export const MAX_OVERRIDE_GATES = 20;

/** What an override request asks: `sluice gate override <gate>... --revision R --for 1h --reason …`. */
export interface OverrideEvent {
  /** The gates named; with `allGates`, every gate in the one delivery's `gates`. */
  readonly gates?: readonly string[];
  readonly allGates?: true;
  /** The deliveries it is for (sorted, distinct); with `allGates`, exactly one. Absent: all using the gates. */
  readonly deliveries?: readonly string[];
  readonly revision: string;
  readonly windowMs: number;
  readonly reason: string;
}

/** The fields of an override request a proof covers, as the CLI sends them. */
export interface OverrideFields {
  readonly action: 'override';
  readonly gates?: readonly string[];
  readonly allGates?: boolean;
  readonly deliveries?: readonly string[];
  readonly revision?: string;
  readonly window?: string;
  readonly reason?: string;
}

const FIELDS = ['action', 'gates', 'allGates', 'deliveries', 'revision', 'window', 'reason'];
const GATE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const EXAMPLE =
  '{"action":"override","gates":["no-deploy-friday"],"revision":"1.3.1@sha256:<hex>","window":"1h","reason":"INC-77 hotfix"}';

/** The hash an override's proof signs: sha256 over its fields in a fixed order, tagged apart from gate requests'. */
export function overrideRequestDigest(fields: OverrideFields): string {
  const canonical = JSON.stringify([
    'sluice-gate-override-v1',
    fields.gates ?? null,
    fields.allGates ?? null,
    fields.deliveries ?? null,
    fields.revision ?? null,
    fields.window ?? null,
    fields.reason ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * Parses and checks an override request (signed: who, when and from where are the function's to
 * record). Each problem is named; a blank reason, a revision without a digest, or a window longer
 * than a day are refused here, a window longer than a gate's maxOverride where the gate is read.
 */
export function parseOverrideEvent(raw: Record<string, unknown>): OverrideEvent {
  const unknown = Object.keys(raw).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    throw new GateEventError(
      `unknown field(s) ${unknown.map((k) => `"${k}"`).join(', ')} in an override (who, when and from where are the gate function's to record); expected ${EXAMPLE}`,
    );
  if (raw.action !== 'override') throw new GateEventError(`"action" must be "override" at this entry`);
  const allGates = raw.allGates === undefined || raw.allGates === false ? undefined : raw.allGates;
  if (allGates !== undefined && allGates !== true)
    throw new GateEventError(`"allGates" must be true or false`);
  const gates = namesOf(raw, 'gates', GATE_NAME, 'gate', MAX_OVERRIDE_GATES);
  const deliveries = namesOf(raw, 'deliveries', DELIVERY_NAME, 'delivery', 50);
  if (allGates && gates)
    throw new GateEventError(`name the gates in "gates", or set "allGates" with one delivery; not both`);
  if (allGates && deliveries?.length !== 1)
    throw new GateEventError(
      `"allGates" overrides every gate of one delivery: name exactly one in "deliveries" (--all-gates --delivery <name>)`,
    );
  if (!allGates && !gates)
    throw new GateEventError(
      `name the gates to override in "gates", or set "allGates" with one delivery (--all-gates --delivery <name>)`,
    );

  const revision = optionalString(raw, 'revision');
  if (revision === undefined)
    throw new GateEventError(
      `"revision" is missing: an override lets one pinned revision through (--revision <tag>@sha256:<hex>, as sluice status shows it)`,
    );
  if (!isPinnableRevision(revision))
    throw new GateEventError(
      `"revision": "${revision}" does not name a digest: use <tag>@sha256:<64 hex> or sha256:<64 hex> (a tag alone can move while the override lasts)`,
    );

  const window = optionalString(raw, 'window');
  if (window === undefined)
    throw new GateEventError(`"window" is missing: say how long the override lasts (--for 1h)`);
  let windowMs: number;
  try {
    windowMs = parseDuration(window);
  } catch (error) {
    throw new GateEventError(`"window": ${(error as Error).message}`);
  }
  if (windowMs <= 0) throw new GateEventError(`"window": must be longer than zero`);
  if (windowMs > MAX_OVERRIDE_LIMIT_MS)
    throw new GateEventError(
      `"window": ${window} is longer than ${formatDuration(MAX_OVERRIDE_LIMIT_MS)}, the longest any override may last`,
    );

  const reason = auditText(raw, 'reason', MAX_REASON_LENGTH);
  if (reason === undefined || reason.trim() === '')
    throw new GateEventError(
      `"reason" is required and may not be blank: say why the gate is bypassed (e.g. --reason "INC-77 hotfix"); it goes to the audit trail and the alarm`,
    );

  return {
    ...(gates && { gates }),
    ...(allGates && { allGates }),
    ...(deliveries && { deliveries }),
    revision,
    windowMs,
    reason,
  };
}

/** A non-empty list of names, sorted and distinct; undefined when absent. */
function namesOf(
  raw: Record<string, unknown>,
  field: string,
  pattern: RegExp,
  what: string,
  max: number,
): string[] | undefined {
  const value = raw[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0)
    throw new GateEventError(`"${field}" must be a non-empty list of ${what} names`);
  if (value.length > max) throw new GateEventError(`"${field}" names ${value.length}; at most ${max}`);
  for (const [index, name] of value.entries())
    if (typeof name !== 'string' || !pattern.test(name))
      throw new GateEventError(`"${field}"[${index}]: ${JSON.stringify(name)} is not a ${what} name`);
  return [...new Set(value as string[])].sort();
}
