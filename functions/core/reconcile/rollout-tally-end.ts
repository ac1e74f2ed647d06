// A rollout member's run end changes its wave's tally by what its own status changed: the status
// as the table holds it (read under the lease, so no other writer changed it since) against the
// status the run end writes, each as it counts toward the generation of the mark. Written in the
// run end's transaction, so the tally and the statuses never part (rollout/tally.ts).
import type { RolloutMark } from '../model/rollout.ts';
import { contributionOf, tallyChange } from '../rollout/tally.ts';
import { tallyUpdate, type LastReadyWay } from '../store/rollout-tallies.ts';
import type { DeliveryStatus, StatusFields } from '../store/status.ts';
import type { TransactItem } from '../store/lease.ts';
import type { TableClient } from '../store/table-client.ts';

/** What a member's run knows of its rollout for its end: the mark to write, and its status as stored now. */
export interface RolloutRunEnd {
  /** The generation and wave the run read; undefined: the run did not reach its rollout. */
  mark?: RolloutMark;
  /** The status as the table holds it now (the lease's read, with a place taken since). */
  stored?: DeliveryStatus;
}

/** `fields` written over `status`: undefined kept, null removed. */
export function written(status: DeliveryStatus | undefined, fields: StatusFields): DeliveryStatus {
  const next: Record<string, unknown> = { ...status };
  for (const [key, value] of Object.entries(fields)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as unknown as DeliveryStatus;
}

/**
 * The status fields with the mark, and the tally change they make (undefined: none). A run that
 * did not reach its rollout keeps its status's mark: its change (a gate closed, a failure before
 * the rollout was read) counts toward that mark's generation.
 */
export function runEndTally(
  db: TableClient,
  member: string,
  run: RolloutRunEnd,
  previous: DeliveryStatus | undefined,
  fields: StatusFields,
): { readonly fields: StatusFields; readonly tally?: (way: LastReadyWay) => TransactItem } {
  const stored = run.stored ?? previous;
  const mark = run.mark ?? stored?.rolloutMark;
  if (!mark) return { fields };
  const withMark = run.mark ? { ...fields, rolloutMark: run.mark } : fields;
  const change = tallyChange(contributionOf(stored, mark), contributionOf(written(stored, withMark), mark));
  if (!change) return { fields: withMark };
  return {
    fields: withMark,
    tally: (way) => ({ Update: tallyUpdate(db, mark, mark.wave, member, change, { lastReady: way }) }),
  };
}
