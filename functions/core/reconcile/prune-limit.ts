// The mass-deletion brake: a run that would prune more of the inventory than the delivery's
// pruneLimit is held before it changes anything, until the delivery's pruneLimitGate is open.
import type { Delivery, PruneLimit } from '../config/index.ts';
import { DEFAULTS } from '../config/defaults.ts';
import { HoldError } from '../errors.ts';
import { formatInstant } from '../gates/messages.ts';
import { alarmHoldsText } from '../alarms/alarms.ts';
import { printable } from '../access/audit-text.ts';
import type { GateConditionReaders } from '../gates/conditions.ts';
import { gateHolding } from '../gates/evaluate.ts';
import { describeEntry, type InventoryEntry } from '../manifests/inventory.ts';
import type { BlockingGate } from '../model/status.ts';
import type { TableClient } from '../store/table-client.ts';

/** A run held by the brake: nothing was applied or pruned. `gate` is the closed approval gate, if any. */
export class PruneLimitHold extends HoldError {
  override readonly name = 'PruneLimitHold';
  readonly reason = 'PruneLimitExceeded';
  constructor(
    message: string,
    readonly gate?: BlockingGate,
  ) {
    super(message);
  }
}

/** `50%` or `20 objects`. */
export function formatPruneLimit(limit: PruneLimit): string {
  return 'percent' in limit ? `${limit.percent}%` : `${limit.count} object${limit.count === 1 ? '' : 's'}`;
}

/**
 * Whether pruning `stale` of `inventory` objects is more than `limit` allows. A share applies once
 * the inventory holds DEFAULTS.pruneLimitMinInventory objects (half of three objects is no mass
 * deletion); a count always applies.
 */
export function exceedsPruneLimit(limit: PruneLimit, stale: number, inventory: number): boolean {
  if ('count' in limit) return stale > limit.count;
  if (inventory < DEFAULTS.pruneLimitMinInventory) return false;
  return stale * 100 > limit.percent * inventory;
}

const SHOWN = 5;

/** What a run would delete, as the brake weighs it. */
export interface PlannedDeletions {
  readonly revision: string;
  /** The inventory entries the revision leaves out (pruned when `prune` is on). */
  readonly stale: readonly InventoryEntry[];
  /** The whole inventory before the run. */
  readonly inventory: readonly InventoryEntry[];
  /**
   * What the run deletes besides the stale entries (objects a pruned CRD or Namespace takes with
   * it, objects recreated by `sluice.io/force`); counted whether or not `prune` is on.
   */
  readonly alsoDeleted?: readonly string[];
}

/**
 * Throws PruneLimitHold when what the run would delete passes the delivery's limit and its
 * pruneLimitGate (if any) is not open at `now`.
 */
export async function checkPruneLimit(
  delivery: Delivery,
  { revision, stale, inventory, alsoDeleted = [] }: PlannedDeletions,
  db: TableClient,
  now: Date,
  conditions: GateConditionReaders = {},
): Promise<void> {
  const limit = delivery.pruneLimit ?? DEFAULTS.pruneLimit;
  const doomed = [...(delivery.prune ? stale.map(describeEntry) : []), ...alsoDeleted];
  if (doomed.length === 0 || !exceedsPruneLimit(limit, doomed.length, inventory.length)) return;

  let closed: BlockingGate | undefined;
  let approval: string;
  const gateName = delivery.pruneLimitGate;
  if (gateName) {
    // An approval pinned to a revision allows that revision's mass deletion only.
    const holding = await gateHolding(
      delivery.name,
      { name: gateName, blocks: 'all' },
      revision,
      db,
      now,
      conditions,
    );
    if (holding === undefined) return;
    if (holding === 'unregistered') {
      approval = `Its pruneLimitGate '${gateName}' is not registered: register it, then open it to allow this`;
    } else {
      const opensAt = holding.opensAt;
      closed = { name: gateName, blocks: 'all', ...(opensAt && { opensAt }) };
      const opens = opensAt ? ` (it opens at ${formatInstant(opensAt)})` : '';
      approval = holding.closedByAlarms?.length
        ? `Gate '${gateName}' is closed by ${alarmHoldsText(holding.closedByAlarms)}: no request opens it until the alarm clears`
        : holding.closedBy
          ? `Gate '${gateName}' is closed by ${printable(holding.closedBy)}${opens}: no request opens it before then`
          : `Gate '${gateName}' is closed${opens}: open it to allow this (sluice gate open ${gateName} --revision ${revision} --for 15m --reason <why>)`;
    }
  } else {
    approval = 'Raise pruneLimit, or name a gate in pruneLimitGate and open it, to allow this';
  }
  const share = Math.round((doomed.length * 100) / Math.max(inventory.length, 1));
  const shown = doomed.slice(0, SHOWN);
  const more = doomed.length > SHOWN ? `, and ${doomed.length - SHOWN} more` : '';
  throw new PruneLimitHold(
    `revision ${revision} would delete ${doomed.length} of the ${inventory.length} objects of delivery ` +
      `'${delivery.name}' (${share}%), more than pruneLimit ${formatPruneLimit(limit)}; nothing was applied ` +
      `or pruned. Would delete: ${shown.join(', ')}${more}. ${approval}`,
    closed,
  );
}
