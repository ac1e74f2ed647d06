import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { eventPutInput, recordEvent, type ReconcileEvent } from './events.ts';
import { fencedTransaction, LeaseLostError, type Fence, type TransactItem } from './lease.ts';
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
 * LeaseLostError and nothing is written), the event, the `also` items and `freeSlot` go in one
 * request (a transaction when there is more than the update); with `releaseLease` the update also
 * releases the lease. `freeSlot` (a cluster slot's conditional Delete) is dropped, and the rest
 * written again, when its condition fails: the slot was lost, it is not this run's to free.
 * Without a lease, one after the other, and neither lease nor slot is touched.
 */
export async function recordRunEnd(
  db: TableClient,
  end: RunEnd,
  fence?: Fence,
  options: {
    readonly also?: readonly TransactItem[];
    readonly releaseLease?: boolean;
    readonly freeSlot?: TransactItem;
  } = {},
): Promise<RunEndWritten> {
  const update = statusUpdateInput(db, end.name, end.status, fence, options);
  const also = options.also ?? [];
  if (!fence || !update) {
    await updateStatus(db, end.name, end.status, fence);
    if (end.event) await recordEvent(db, end.event, fence);
    if (fence && also.length > 0) await fencedTransaction(db, fence, also);
    return { leaseReleased: false, slotFreed: false };
  }
  const items: TransactItem[] = [
    { Update: update },
    ...(end.event ? [{ Put: eventPutInput(db, end.event) }] : []),
    ...also,
  ];
  const written = { leaseReleased: options.releaseLease === true };
  try {
    if (options.freeSlot) {
      await db.doc.send(new TransactWriteCommand({ TransactItems: [...items, options.freeSlot] }));
      return { ...written, slotFreed: true };
    }
  } catch (error) {
    const lostSlot =
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code !== 'ConditionalCheckFailed' &&
      error.CancellationReasons?.[items.length]?.Code === 'ConditionalCheckFailed';
    if (!lostSlot) throw runEndError(error, end.name);
  }
  try {
    if (items.length === 1) await db.doc.send(new UpdateCommand(update));
    else await db.doc.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    throw runEndError(error, end.name);
  }
  return { ...written, slotFreed: false };
}

/** LeaseLostError when the fenced status update's condition failed, else `error`. */
function runEndError(error: unknown, name: string): unknown {
  return error instanceof ConditionalCheckFailedException ||
    (error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed')
    ? new LeaseLostError(name)
    : error;
}
