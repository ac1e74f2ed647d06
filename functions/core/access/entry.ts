import type { GateAction } from '../config/index.ts';

/**
 * Each gate and action has an entry of its own into the gate function: an alias named
 * `<action>_<gate>` with an IAM-authenticated function URL. IAM decides who may invoke which
 * URL; the function refuses a request for another gate or action than the entry it came through.
 * `_` cannot appear in a gate name, so the alias names of two gates never collide.
 */
export function gateAliasName(gate: string, action: GateAction): string {
  return `${action}_${gate}`;
}

/** The gate and action an alias stands for, from the ARN the function was invoked as; none when unqualified. */
export function gateEntryOf(invokedFunctionArn: string | undefined): GateEntry | undefined {
  const qualifier = invokedFunctionArn?.split(':')[7];
  const match = qualifier ? /^(open|close)_([a-z0-9-]+)$/.exec(qualifier) : null;
  return match ? { action: match[1] as GateAction, gate: match[2]! } : undefined;
}

export interface GateEntry {
  readonly gate: string;
  readonly action: GateAction;
}

/** The gate function's alias the ECR PutImage rule invokes (preventSelfApproval); no gate entry can be named so. */
export const PUSH_RECORDS_ALIAS = 'record_pushes';

/** The qualifier of the ARN the function was invoked as (its alias or version); none when unqualified. */
export const qualifierOf = (invokedFunctionArn: string | undefined): string | undefined =>
  invokedFunctionArn?.split(':')[7];

/** True when the function was invoked as itself: unqualified, `$LATEST` or a version, not through an alias. */
export function isFunctionItself(invokedFunctionArn: string | undefined): boolean {
  const qualifier = qualifierOf(invokedFunctionArn);
  return qualifier === undefined || qualifier === '$LATEST' || /^\d+$/.test(qualifier);
}

/** How a message names the entry an invocation came through: `the <alias> entry`, or the function itself. */
export const entryNameOf = (invokedFunctionArn: string | undefined): string =>
  isFunctionItself(invokedFunctionArn)
    ? 'the function itself'
    : `the ${qualifierOf(invokedFunctionArn)} entry`;
