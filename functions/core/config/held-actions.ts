// What a closed gate holds (`holds`): new revisions always, and a rollback to a revision the
// delivery applied before only when the gate says so.
import type { HeldAction } from './types.ts';

/** Every action a gate's `holds` may name, in the order they are written back. */
export const HELD_ACTIONS = ['revisions', 'rollback'] as const satisfies readonly HeldAction[];

/** What a gate holds when its `holds` is not given: new revisions; a rollback passes. */
export const DEFAULT_HELD_ACTIONS: readonly HeldAction[] = ['revisions'];

/**
 * Why a `holds` list is refused, or undefined when it is fine: it must name `revisions` (a closed
 * gate always holds new revisions: there is no gate that lets them through and holds only
 * rollbacks), and each action once.
 */
export function heldActionsProblem(holds: readonly string[]): string | undefined {
  const twice = holds.filter((action, index) => holds.indexOf(action) !== index);
  if (twice.length > 0) return `lists ${twice.map((a) => `"${a}"`).join(', ')} more than once`;
  if (!holds.includes('revisions'))
    return 'must list "revisions": a closed gate always holds new revisions (write [revisions] or [revisions, rollback])';
  return undefined;
}

/** True when a closed `gate` holds `action` (its `holds`, or the default: revisions only). */
export const gateHolds = (gate: { readonly holds?: readonly HeldAction[] }, action: HeldAction): boolean =>
  (gate.holds ?? DEFAULT_HELD_ACTIONS).includes(action);
