// A rollout action (halt, resume, rollback) as it reaches the gate function: its fields, checked,
// and the hash its proof of identity signs (tagged apart from gate requests' and overrides', so no
// proof for one is taken for another).
import { createHash } from 'node:crypto';
import { MAX_REASON_LENGTH } from '../access/audit-text.ts';
import { auditText, DELIVERY_NAME, GateEventError } from './event.ts';

/** The gate function's alias through which rollout actions come: its function URL is what grantRolloutControl allows. */
import { ROLLOUTS_ALIAS } from './contract.ts';

export { ROLLOUTS_ALIAS };

export const ROLLOUT_ACTIONS = ['halt', 'resume', 'rollback'] as const;
export type RolloutActionKind = (typeof ROLLOUT_ACTIONS)[number];

/** What `sluice rollout halt|resume|rollback <rollout> --reason …` asks. */
export interface RolloutActionEvent {
  readonly rollout: string;
  readonly action: RolloutActionKind;
  readonly reason: string;
}

/** The fields of a rollout action a proof covers, as the CLI sends them. */
export interface RolloutActionFields {
  readonly rollout: string;
  readonly action: string;
  readonly reason?: string;
}

const FIELDS = ['rollout', 'action', 'reason'];
const EXAMPLE = '{"rollout":"app","action":"halt","reason":"INC-77: errors in eu-west-1"}';

/** The hash a rollout action's proof signs: sha256 over its fields in a fixed order, tagged apart. */
export function rolloutActionDigest(fields: RolloutActionFields): string {
  const canonical = JSON.stringify([
    'sluice-rollout-action-v1',
    fields.rollout,
    fields.action,
    fields.reason ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** True when the function was invoked through its rollouts entry. */
export const isRolloutsEntry = (invokedFunctionArn: string | undefined): boolean =>
  invokedFunctionArn?.split(':')[7] === ROLLOUTS_ALIAS;

/** True for an event that asks for a rollout action (it names a rollout). */
export const isRolloutActionEvent = (event: unknown): event is Record<string, unknown> =>
  typeof event === 'object' && event !== null && !Array.isArray(event) && 'rollout' in event;

/**
 * Parses and checks a rollout action (who, when and from where are the function's to record). Each
 * problem is named; a blank reason is refused: it goes to the audit trail.
 */
export function parseRolloutAction(raw: Record<string, unknown>): RolloutActionEvent {
  const unknown = Object.keys(raw).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    throw new GateEventError(
      `unknown field(s) ${unknown.map((k) => `"${k}"`).join(', ')} in a rollout action (who, when and from where are the gate function's to record); expected ${EXAMPLE}`,
    );
  const { rollout, action } = raw;
  if (typeof rollout !== 'string' || !DELIVERY_NAME.test(rollout))
    throw new GateEventError(
      `"rollout": ${JSON.stringify(rollout)} is not a rollout name; expected ${EXAMPLE}`,
    );
  if (typeof action !== 'string' || !(ROLLOUT_ACTIONS as readonly string[]).includes(action))
    throw new GateEventError(
      `"action": ${JSON.stringify(action)} is not a rollout action: use ${ROLLOUT_ACTIONS.join(', ')}`,
    );
  const reason = auditText(raw, 'reason', MAX_REASON_LENGTH);
  if (reason === undefined || reason.trim() === '')
    throw new GateEventError(
      `"reason" is required and may not be blank: say why rollout '${rollout}' is ${action === 'halt' ? 'halted' : action === 'resume' ? 'resumed' : 'rolled back'} (--reason "INC-77 …"); it goes to the audit trail`,
    );
  return { rollout, action: action as RolloutActionKind, reason };
}
