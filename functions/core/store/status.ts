import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FailureReason } from '../errors.ts';
import { fenceCondition, LEASE_ATTRIBUTES, LeaseLostError, type Fence } from './lease.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

export type StatusReason =
  | FailureReason
  | 'ReconciliationSucceeded'
  | 'Progressing'
  | 'DependencyNotReady'
  /** Held: the cluster's concurrency limit was reached; retried shortly. */
  | 'ClusterBusy';

/** A closed gate holding a delivery, and when it is expected to open (if known). */
export interface BlockingGate {
  readonly name: string;
  readonly blocks: 'all' | 'revisions';
  readonly opensAt?: string;
  /** Set when the gate is open, but only for another revision than the one held, or for other deliveries. */
  readonly openFor?: {
    readonly revision?: string;
    readonly deliveries?: readonly string[];
    readonly approvedBy: string;
  };
  /** The gate opens for one named revision at a time (`approval: revision`). */
  readonly approvesRevisions?: boolean;
  /** Why the gate's stored request cannot be evaluated (so it counts as closed). */
  readonly problem?: string;
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
  /**
   * The applied artifact's `org.opencontainers.image.revision` (the Git revision it was pushed
   * from, e.g. `main@sha1:…`), as Flux's `lastAppliedOriginRevision`; absent when it has none.
   */
  readonly lastAppliedOriginRevision?: string;
  readonly lastAttemptedRevision?: string;
  readonly inventorySize?: number;
  readonly changes?: ChangeCounts;
  /** The closed gates holding the delivery (set while `reason` is `GateClosed`). */
  readonly blockedBy?: BlockingGate[];
  /** When the delivery was first held by a gate, kept across blocked runs (for alarms). */
  readonly blockedSince?: string;
  /** A newer revision held by a change freeze (`blocks: revisions`). */
  readonly pendingRevision?: string;
  /** When a failed delivery is retried (`retryInterval`), if a retry is scheduled. */
  readonly nextRetryAt?: string;
  /**
   * CRDs and Namespaces the applied revision leaves out, kept (not deleted) because they hold
   * objects the prune does not delete: each named with the first objects holding it.
   */
  readonly kept?: readonly KeptContainerStatus[];
  readonly lastReconcileAt: string;
  readonly lastSuccessAt?: string;
  readonly durationMs?: number;
}

/** A kept CRD or Namespace, as the status records it. */
export interface KeptContainerStatus {
  /** `Namespace/<name>` or `CustomResourceDefinition/<name>`. */
  readonly container: string;
  /** The first objects it holds that the prune does not delete (`Kind/namespace/name`). */
  readonly objects: readonly string[];
}

type Clearable =
  'blockedBy' | 'blockedSince' | 'pendingRevision' | 'nextRetryAt' | 'lastAppliedOriginRevision' | 'kept';

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
