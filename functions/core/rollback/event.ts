// A delivery's rollback as it reaches the gate function (`sluice rollback`): its fields, checked,
// and the hash its proof of identity signs (tagged apart from every other request's, so no proof
// for one is taken for another).
import { createHash } from 'node:crypto';
import { MAX_REASON_LENGTH } from '../access/audit-text.ts';
import { auditText, DELIVERY_NAME, GateEventError } from '../gates/event.ts';

/** What `sluice rollback <delivery> [--to <revision>] --reason …` asks. */
export interface RollbackEvent {
  readonly action: 'rollback';
  readonly delivery: string;
  /** The revision to return to (a digest, or `<tag>@sha256:…`); none: the one applied before the current. */
  readonly revision?: string;
  readonly reason: string;
}

/** The fields of a rollback a proof covers, as the CLI sends them. */
export interface RollbackFields {
  readonly action: 'rollback';
  readonly delivery: string;
  readonly revision?: string;
  readonly reason?: string;
}

const FIELDS = ['action', 'delivery', 'revision', 'reason'];
const EXAMPLE = '{"action":"rollback","delivery":"checkout","revision":"sha256:…","reason":"INC-77"}';
const REVISION = /^(?:[\w][\w.-]{0,127}@)?sha256:[0-9a-f]{64}$/;

/** The hash a rollback's proof signs: sha256 over its fields in a fixed order, tagged apart. */
export function rollbackRequestDigest(fields: RollbackFields): string {
  const canonical = JSON.stringify([
    'sluice-delivery-rollback-v1',
    fields.delivery,
    fields.revision ?? null,
    fields.reason ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** True for an event that asks for a delivery's rollback (`"action":"rollback"` naming a delivery, not a rollout). */
export const isRollbackEvent = (event: unknown): event is Record<string, unknown> =>
  typeof event === 'object' &&
  event !== null &&
  !Array.isArray(event) &&
  (event as { action?: unknown }).action === 'rollback' &&
  'delivery' in event &&
  !('rollout' in event);

/**
 * Parses and checks a rollback (who, when and from where are the function's to record). Each
 * problem is named; a blank reason is refused (it goes to the audit trail), and so is a revision
 * that names no digest: a rollback never looks a tag up.
 */
export function parseRollbackEvent(raw: Record<string, unknown>): RollbackEvent {
  const unknown = Object.keys(raw).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    throw new GateEventError(
      `unknown field(s) ${unknown.map((k) => `"${k}"`).join(', ')} in a rollback (who, when and from where are the gate function's to record); expected ${EXAMPLE}`,
    );
  if (raw.action !== 'rollback')
    throw new GateEventError(
      `"action": ${JSON.stringify(raw.action)} is not "rollback"; expected ${EXAMPLE}`,
    );
  const { delivery, revision } = raw;
  if (typeof delivery !== 'string' || !DELIVERY_NAME.test(delivery))
    throw new GateEventError(
      `"delivery": ${JSON.stringify(delivery)} is not a delivery name; expected ${EXAMPLE}`,
    );
  if (revision !== undefined && (typeof revision !== 'string' || !REVISION.test(revision)))
    throw new GateEventError(
      `"revision": ${JSON.stringify(revision)} names no digest: a rollback goes back to a digest delivery '${delivery}' applied (--to sha256:<hex> or <tag>@sha256:<hex>, as sluice status shows it), never looks a tag up`,
    );
  const reason = auditText(raw, 'reason', MAX_REASON_LENGTH);
  if (reason === undefined || reason.trim() === '')
    throw new GateEventError(
      `"reason" is required and may not be blank: say why delivery '${delivery}' is rolled back (--reason "INC-77 …"); it goes to the audit trail`,
    );
  return { action: 'rollback', delivery, ...(revision !== undefined && { revision }), reason };
}
