import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FailureReason } from '../errors.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

export type StatusReason = FailureReason | 'ReconciliationSucceeded' | 'Progressing' | 'DependencyNotReady';

/** A closed gate holding a delivery, and when it is expected to open (if known). */
export interface BlockingGate {
  readonly name: string;
  readonly blocks: 'all' | 'revisions';
  readonly opensAt?: string;
}

/** What the last reconcile did, as counts of objects. */
export interface ChangeCounts {
  readonly created: number;
  readonly configured: number;
  readonly unchanged: number;
  readonly deleted: number;
}

/** A delivery's status, named like Flux's Kustomization status where Flux has the field. */
export interface DeliveryStatus {
  readonly ready: boolean;
  readonly reason: StatusReason;
  readonly message: string;
  readonly lastAppliedRevision?: string;
  readonly lastAttemptedRevision?: string;
  readonly inventorySize?: number;
  readonly changes?: ChangeCounts;
  readonly blockedBy?: BlockingGate[];
  readonly lastReconcileAt: string;
  readonly lastSuccessAt?: string;
  readonly durationMs?: number;
}

export async function getStatus(db: TableClient, name: string): Promise<DeliveryStatus | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: { pk: deliveryKey(name), sk: 'status' },
      ConsistentRead: true,
    }),
  );
  if (!Item || Item.reason === undefined) return undefined;
  const { pk: _pk, sk: _sk, leaseHolder: _holder, leaseExpiresAt: _expires, ...status } = Item;
  return status as DeliveryStatus;
}

/** Sets the given status fields (undefined ones are left as they are, and so are the lease attributes). */
export async function updateStatus(
  db: TableClient,
  name: string,
  status: Partial<DeliveryStatus>,
): Promise<void> {
  const entries = Object.entries(status).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return;
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: { pk: deliveryKey(name), sk: 'status' },
      UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(entries.map(([key], i) => [`#f${i}`, key])),
      ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
    }),
  );
}
