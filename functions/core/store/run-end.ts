import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { eventPutInput, recordEvent, type ReconcileEvent } from './events.ts';
import { LeaseLostError, type Fence } from './lease.ts';
import { statusUpdateInput, updateStatus, type StatusFields } from './status.ts';
import type { TableClient } from './table-client.ts';

/**
 * How a run ended: its status and its event. Under a lease both go in one transaction, the status
 * update conditional on the fence (else LeaseLostError, and neither is written); without one, one
 * after the other.
 */
export async function recordRunEnd(
  db: TableClient,
  end: { readonly name: string; readonly status: StatusFields; readonly event: ReconcileEvent },
  fence?: Fence,
): Promise<void> {
  const update = statusUpdateInput(db, end.name, end.status, fence);
  if (!fence || !update) {
    await updateStatus(db, end.name, end.status, fence);
    await recordEvent(db, end.event, fence);
    return;
  }
  try {
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [{ Update: update }, { Put: eventPutInput(db, end.event) }],
      }),
    );
  } catch (error) {
    if (
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed'
    )
      throw new LeaseLostError(end.name);
    throw error;
  }
}
