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

/**
 * Records how a run ended. Under a lease the status update (conditional on the fence, else
 * LeaseLostError and nothing is written), the event and the `also` items go in one request (a
 * transaction when there is more than the update); with `releaseLease` the update also releases
 * the lease, and the answer is true. Without a lease, one after the other.
 */
export async function recordRunEnd(
  db: TableClient,
  end: RunEnd,
  fence?: Fence,
  options: { readonly also?: readonly TransactItem[]; readonly releaseLease?: boolean } = {},
): Promise<boolean> {
  const update = statusUpdateInput(db, end.name, end.status, fence, options);
  const also = options.also ?? [];
  if (!fence || !update) {
    await updateStatus(db, end.name, end.status, fence);
    if (end.event) await recordEvent(db, end.event, fence);
    if (fence && also.length > 0) await fencedTransaction(db, fence, also);
    return false;
  }
  const items: TransactItem[] = [
    { Update: update },
    ...(end.event ? [{ Put: eventPutInput(db, end.event) }] : []),
    ...also,
  ];
  try {
    if (items.length === 1) await db.doc.send(new UpdateCommand(update));
    else await db.doc.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    if (
      error instanceof ConditionalCheckFailedException ||
      (error instanceof TransactionCanceledException &&
        error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed')
    )
      throw new LeaseLostError(end.name);
    throw error;
  }
  return options.releaseLease === true;
}
