import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryStatus } from '../model/status.ts';
import { fenceCondition, LEASE_ATTRIBUTES, LeaseLostError, type Fence } from './lease.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

export type {
  BlockingGate,
  ChangeCounts,
  DeliveryStatus,
  KeptContainerStatus,
  StatusReason,
} from '../model/status.ts';

type Clearable =
  | 'blockedBy'
  | 'blockedSince'
  | 'pendingRevision'
  | 'nextRetryAt'
  | 'lastAppliedOriginRevision'
  | 'kept'
  | 'readySince'
  | 'soakingUntil';

/** A status write: fields left undefined are kept, the clearable ones set to null are removed. */
export type StatusUpdate = Omit<DeliveryStatus, 'lastReconcileAt' | 'durationMs' | Clearable> & {
  readonly [K in Clearable]?: DeliveryStatus[K] | null;
};

export async function getStatus(db: TableClient, name: string): Promise<DeliveryStatus | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: { pk: deliveryKey(name), sk: 'status' },
      ConsistentRead: true,
    }),
  );
  if (!Item || Item.reason === undefined) return undefined;
  const status: Record<string, unknown> = { ...Item };
  for (const key of ['pk', 'sk', ...LEASE_ATTRIBUTES]) delete status[key];
  return status as unknown as DeliveryStatus;
}

/**
 * Sets the given status fields: undefined ones are left as they are (so is the lease), null ones
 * removed. With `fence`, only while that run holds the lease (else LeaseLostError).
 */
export async function updateStatus(
  db: TableClient,
  name: string,
  status: { readonly [K in keyof DeliveryStatus]?: DeliveryStatus[K] | null },
  fence?: Fence,
): Promise<void> {
  const entries = Object.entries(status).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return;
  const names = Object.fromEntries(entries.map(([key], i) => [`#f${i}`, key]));
  const set = entries.flatMap(([, value], i) => (value === null ? [] : [`#f${i} = :v${i}`]));
  const remove = entries.flatMap(([, value], i) => (value === null ? [`#f${i}`] : []));
  const values = Object.fromEntries(
    entries.flatMap(([, value], i) => (value === null ? [] : [[`:v${i}`, value]])),
  );
  const condition = fence && fenceCondition(fence);
  const allValues = { ...values, ...condition?.ExpressionAttributeValues };
  try {
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: deliveryKey(name), sk: 'status' },
        UpdateExpression: [
          set.length > 0 && `SET ${set.join(', ')}`,
          remove.length > 0 && `REMOVE ${remove.join(', ')}`,
        ]
          .filter(Boolean)
          .join(' '),
        ExpressionAttributeNames: names,
        ...(condition && { ConditionExpression: condition.ConditionExpression }),
        ...(Object.keys(allValues).length > 0 && { ExpressionAttributeValues: allValues }),
      }),
    );
  } catch (error) {
    if (fence && error instanceof ConditionalCheckFailedException) throw new LeaseLostError(name);
    throw error;
  }
}
