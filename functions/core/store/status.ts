import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryStatus } from '../model/status.ts';
import {
  fenceCondition,
  LEASE_ATTRIBUTES,
  LeaseLostError,
  RELEASED_LEASE_ATTRIBUTES,
  type Fence,
} from './lease.ts';
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
  | 'unplannedBlockedSince'
  | 'pendingRevision'
  | 'nextRetryAt'
  | 'lastAppliedOriginRevision'
  | 'lastAppliedSignedBy'
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
  return statusFromItem(Item);
}

/** The status an item of the table holds (none before a run has finished), its keys, lease and spec left out. */
export function statusFromItem(
  item: Readonly<Record<string, unknown>> | undefined,
): DeliveryStatus | undefined {
  if (!item || item.reason === undefined) return undefined;
  const status: Record<string, unknown> = { ...item };
  for (const key of ['pk', 'sk', 'spec', 'specRev', ...LEASE_ATTRIBUTES]) delete status[key];
  return status as unknown as DeliveryStatus;
}

/**
 * Sets the given status fields: undefined ones are left as they are (so is the lease), null ones
 * removed. With `fence`, only while that run holds the lease (else LeaseLostError).
 */
export async function updateStatus(
  db: TableClient,
  name: string,
  status: StatusFields,
  fence?: Fence,
): Promise<void> {
  const update = statusUpdateInput(db, name, status, fence);
  if (!update) return;
  try {
    await db.doc.send(new UpdateCommand(update));
  } catch (error) {
    if (fence && error instanceof ConditionalCheckFailedException) throw new LeaseLostError(name);
    throw error;
  }
}

/** Status fields to write: undefined ones left as they are, null ones removed. */
export type StatusFields = { readonly [K in keyof DeliveryStatus]?: DeliveryStatus[K] | null };

/**
 * The Update of updateStatus (with the fence as its condition), or undefined when nothing is to be
 * written. `releaseLease`: it also releases the fence's lease (the run's last write).
 */
export function statusUpdateInput(
  db: TableClient,
  name: string,
  status: StatusFields,
  fence?: Fence,
  options: { readonly releaseLease?: boolean } = {},
) {
  const entries = Object.entries(status).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return undefined;
  const names = Object.fromEntries(entries.map(([key], i) => [`#f${i}`, key]));
  const set = entries.flatMap(([, value], i) => (value === null ? [] : [`#f${i} = :v${i}`]));
  const remove = [
    ...entries.flatMap(([, value], i) => (value === null ? [`#f${i}`] : [])),
    ...(fence && options.releaseLease ? RELEASED_LEASE_ATTRIBUTES : []),
  ];
  const values = Object.fromEntries(
    entries.flatMap(([, value], i) => (value === null ? [] : [[`:v${i}`, value]])),
  );
  const condition = fence && fenceCondition(fence);
  const allValues = { ...values, ...condition?.ExpressionAttributeValues };
  return {
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
  };
}
