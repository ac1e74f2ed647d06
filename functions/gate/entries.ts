// Which entry of the gate function an invocation came through. Each entry is an alias that IAM
// grants apart (lib/function-entry.ts); Lambda gives the function the ARN it was invoked as, and
// that entry alone decides what an invocation may ask (routes.ts).
import {
  BREAK_GLASS_ALIAS,
  ROLLOUTS_ALIAS,
  RUNBOOKS_ALIAS,
  SCHEDULES_ALIAS,
} from '../core/gates/contract.ts';
import { gateEntryOf, isFunctionItself, PUSH_RECORDS_ALIAS, qualifierOf } from '../core/access/entry.ts';

export type EntryKind =
  /** `open_<gate>` / `close_<gate>`: signed gate requests (grantGateRequests). */
  | 'gate-request'
  /** `break_glass`: signed overrides and the break-glass runbook (grantBreakGlass). */
  | 'break-glass'
  /** `rollouts`: signed rollout actions (grantRolloutControl). */
  | 'rollouts'
  /** `runbooks`: the gate runbooks' Automation role, reporting a console approval. */
  | 'runbooks'
  /** `record_pushes`: the ECR PutImage rule (preventSelfApproval). */
  | 'push-records'
  /** `schedules`: the gates' cron schedules (EventBridge Scheduler). */
  | 'schedules'
  /** No alias: `$LATEST`, a version or an unqualified name (the console's test box, an administrator). */
  | 'function'
  /** An alias the construct never makes. */
  | 'unknown';

export interface InvokedEntry {
  readonly kind: EntryKind;
  /** How a message names the entry: its alias, or "the function itself". */
  readonly name: string;
}

const ALIASES: ReadonlyMap<string, EntryKind> = new Map([
  [BREAK_GLASS_ALIAS, 'break-glass'],
  [ROLLOUTS_ALIAS, 'rollouts'],
  [RUNBOOKS_ALIAS, 'runbooks'],
  [PUSH_RECORDS_ALIAS, 'push-records'],
  [SCHEDULES_ALIAS, 'schedules'],
]);

/** The entry an invocation came through, from `context.invokedFunctionArn` (absent: a direct call). */
export function invokedEntry(invokedFunctionArn: string | undefined): InvokedEntry {
  if (isFunctionItself(invokedFunctionArn)) return { kind: 'function', name: 'the function itself' };
  const qualifier = qualifierOf(invokedFunctionArn)!;
  const kind = ALIASES.get(qualifier) ?? (gateEntryOf(invokedFunctionArn) ? 'gate-request' : 'unknown');
  return { kind, name: `the ${qualifier} entry` };
}
