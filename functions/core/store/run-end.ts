import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { eventPutInput, recordEvent, type ReconcileEvent } from './events.ts';
import { isTransactionConflict } from './gates.ts';
import { fencedTransaction, LeaseLostError, type Fence, type TransactItem } from './lease.ts';
import type { LastReadyWay } from './rollout-tallies.ts';
import { statusUpdateInput, updateStatus, type StatusFields } from './status.ts';
import type { TableClient } from './table-client.ts';

/** How a run ended: its status and, unless it changed nothing, its event. */
export interface RunEnd {
  readonly name: string;
  readonly status: StatusFields;
  readonly event?: ReconcileEvent;
}

/** What a run end's write did besides the status and event. */
export interface RunEndWritten {
  /** The lease was released with it. */
  readonly leaseReleased: boolean;
  /** The cluster slot was freed with it. */
  readonly slotFreed: boolean;
}

/**
 * Records how a run ended. Under a lease the status update (conditional on the fence, else
 * LeaseLostError and nothing is written), the event, the `also` items, the rollout `tally` change
 * and `freeSlot` go in one request (a transaction when there is more than the update); with
 * `releaseLease` the update also releases the lease. `freeSlot` (a cluster slot's conditional
 * Delete) is dropped, and the rest written again, when its condition fails: the slot was lost, it
 * is not this run's to free. The tally's change is built for one way of keeping its lastReady and
 * built the other way when that one's condition fails; a transaction that collides with another
 * (the members of a wave share its tally) is sent again. Without a lease, one after the other, and
 * neither lease nor slot is touched.
 */
export async function recordRunEnd(
  db: TableClient,
  end: RunEnd,
  fence?: Fence,
  options: {
    readonly also?: readonly TransactItem[];
    readonly releaseLease?: boolean;
    readonly freeSlot?: TransactItem;
    readonly tally?: (way: LastReadyWay) => TransactItem | undefined;
  } = {},
): Promise<RunEndWritten> {
  const update = statusUpdateInput(db, end.name, end.status, fence, options);
  const also = options.also ?? [];
  if (!fence || !update) {
    await updateStatus(db, end.name, end.status, fence);
    if (end.event) await recordEvent(db, end.event, fence);
    const tally = options.tally?.('raise');
    if (fence && also.length + (tally ? 1 : 0) > 0)
      await fencedTransaction(db, fence, [...also, ...(tally ? [tally] : [])]);
    return { leaseReleased: false, slotFreed: false };
  }
  const written = { leaseReleased: options.releaseLease === true };
  let way: LastReadyWay = 'raise';
  let slot = options.freeSlot;
  for (let attempt = 0; ; attempt++) {
    const tally = options.tally?.(way);
    const items: TransactItem[] = [
      { Update: update },
      ...(end.event ? [{ Put: eventPutInput(db, end.event) }] : []),
      ...also,
      ...(tally ? [tally] : []),
    ];
    try {
      if (slot) {
        await db.doc.send(new TransactWriteCommand({ TransactItems: [...items, slot] }));
        return { ...written, slotFreed: true };
      }
      if (items.length === 1) await db.doc.send(new UpdateCommand(update));
      else await db.doc.send(new TransactWriteCommand({ TransactItems: items }));
      return { ...written, slotFreed: false };
    } catch (error) {
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : [];
      const failed = (index: number) => reasons[index]?.Code === 'ConditionalCheckFailed';
      if (failed(0) || attempt >= 12) throw runEndError(error, end.name);
      if (slot && failed(items.length)) slot = undefined;
      else if (tally && failed(items.length - 1)) way = way === 'raise' ? 'keep' : 'raise';
      else if (isTransactionConflict(error))
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(500, 10 * 2 ** attempt) * (0.5 + Math.random())),
        );
      else throw runEndError(error, end.name);
    }
  }
}
/** LeaseLostError when the fenced status update's condition failed, else `error`. */
function runEndError(error: unknown, name: string): unknown {
  return error instanceof ConditionalCheckFailedException ||
    (error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed')
    ? new LeaseLostError(name)
    : error;
}
