import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Delivery, DeliveryDependency } from '../config/index.ts';
import { removeAppliedRevisions } from './applied-revisions.ts';
import { lookupChanges, lookupEntries } from './lookup-entries.ts';
import { listSpecNames, removeSpec, type SpecKind } from './specs.ts';
import { DELIVERY_INDEX, deliveryKey, type TableClient } from './table-client.ts';

const DELIVERIES: SpecKind = { key: deliveryKey, index: DELIVERY_INDEX };

/** A delivery's spec as stored: the spec, its key, and when (and how many times) it was written. */
export interface DeliveryItem {
  readonly delivery: Delivery;
  readonly key: { readonly pk: string; readonly sk: string };
  readonly registeredAt: string;
  /** Incremented by each write; absent on specs written before it was kept. */
  readonly rev?: number;
}

/** A spec stored before `dependsOn` existed depends on nothing; one stored before soaks lists names. */
function normalised(
  spec: Omit<Delivery, 'dependsOn'> & { readonly dependsOn?: readonly (string | DeliveryDependency)[] },
): Delivery {
  const dependsOn = (spec.dependsOn ?? []).map((dependency) =>
    typeof dependency === 'string' ? { name: dependency } : dependency,
  );
  return { ...spec, dependsOn };
}

export async function getDeliveryItem(db: TableClient, name: string): Promise<DeliveryItem | undefined> {
  const key = { pk: deliveryKey(name), sk: 'spec' };
  const { Item } = await db.doc.send(new GetCommand({ TableName: db.table, Key: key, ConsistentRead: true }));
  if (!Item) return undefined;
  return {
    delivery: normalised(Item.spec as Delivery),
    key,
    registeredAt: Item.registeredAt as string,
    ...(typeof Item.rev === 'number' && { rev: Item.rev }),
  };
}

/**
 * The copy of the spec on the delivery's status item, written with the spec (putDelivery) and
 * removed with it (removeDelivery), so that claiming the lease (on that item) reads the spec too.
 */
function specCopy(db: TableClient, delivery: Delivery, rev: number) {
  return {
    TableName: db.table,
    Key: { pk: deliveryKey(delivery.name), sk: 'status' },
    UpdateExpression: 'SET spec = :spec, specRev = :rev',
    ExpressionAttributeValues: { ':spec': delivery, ':rev': rev },
  };
}

/** The spec a status item holds a copy of (as a lease claim read it), if it does. */
export function deliveryFromStatusItem(item: Readonly<Record<string, unknown>>): Delivery | undefined {
  return item.spec === undefined ? undefined : normalised(item.spec as Delivery);
}

/**
 * For a spec stored before its status item held a copy: copies it there, unless the spec changed or
 * was removed meanwhile. False when the delivery has no spec.
 */
export async function copySpecToStatus(db: TableClient, name: string): Promise<boolean> {
  const stored = await getDeliveryItem(db, name);
  if (!stored) return false;
  const copy = specCopy(db, stored.delivery, stored.rev ?? 0);
  try {
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: db.table, Key: stored.key, ...unchangedSince(stored) } },
          { Update: { ...copy, ConditionExpression: 'attribute_not_exists(specRev)' } },
        ],
      }),
    );
  } catch (error) {
    // Another write copied a newer spec, or removed it: the caller reads the status item again.
    if (!(error instanceof TransactionCanceledException)) throw error;
  }
  return true;
}

/** The condition of a write of the spec item that holds only while it is still `previous` (or absent). */
function unchangedSince(previous: DeliveryItem | undefined): {
  ConditionExpression: string;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  if (!previous) return { ConditionExpression: 'attribute_not_exists(pk)' };
  if (previous.rev === undefined)
    return {
      ConditionExpression: 'attribute_not_exists(rev) AND registeredAt = :seen',
      ExpressionAttributeValues: { ':seen': previous.registeredAt },
    };
  return { ConditionExpression: 'rev = :seen', ExpressionAttributeValues: { ':seen': previous.rev } };
}

/** A delivery's spec. */
export async function getDelivery(db: TableClient, name: string): Promise<Delivery | undefined> {
  return (await getDeliveryItem(db, name))?.delivery;
}

/** How often a spec write is tried when other writes of the same delivery come between its read and its write. */
const PUT_ATTEMPTS = 10;

/**
 * Writes a delivery's spec (as registered by the CDK app or `sluice register`), its entry in the
 * list of deliveries and its lookup items (repository, gates) in one transaction, removing the
 * lookup items of what it no longer names, and its copy on the status item. Conditional on the
 * spec read before: two writes of one delivery at once cannot leave the lookups of the one that lost.
 */
export async function putDelivery(db: TableClient, delivery: Delivery, registeredAt: Date): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const previous = await getDeliveryItem(db, delivery.name);
    const rev = (previous?.rev ?? 0) + 1;
    const unchanged = unchangedSince(previous);
    try {
      await db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: db.table,
                Item: {
                  pk: deliveryKey(delivery.name),
                  sk: 'spec',
                  spec: delivery,
                  registeredAt: registeredAt.toISOString(),
                  rev,
                },
                ...unchanged,
              },
            },
            { Update: specCopy(db, delivery, rev) },
            { Put: { TableName: db.table, Item: { pk: DELIVERY_INDEX, sk: delivery.name } } },
            ...lookupChanges(db, previous?.delivery, delivery),
          ],
        }),
      );
      return;
    } catch (error) {
      const raced =
        error instanceof TransactionCanceledException &&
        (error.CancellationReasons ?? []).some(
          (reason) => reason.Code === 'ConditionalCheckFailed' || reason.Code === 'TransactionConflict',
        );
      if (!raced || attempt >= PUT_ATTEMPTS) throw error;
      // Apart, so that writers racing again do not collide again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * attempt));
    }
  }
}

export const listDeliveryNames = (db: TableClient): Promise<string[]> => listSpecNames(db, DELIVERIES);

/**
 * Removes a delivery's lookup items, then every item under it (inventory, events, ...), then its
 * spec and its status item (which holds a copy of the spec) in one transaction. Lookups first: a
 * removal cut short leaves a spec no push finds (its interval still runs), never a lookup naming
 * a delivery that is gone; spec and copy together: never a copy a lease claim finds without the spec.
 */
export async function removeDelivery(db: TableClient, name: string): Promise<void> {
  const stored = await getDelivery(db, name);
  await Promise.all(
    (stored ? lookupEntries(stored) : []).map(({ pk, sk }) =>
      db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk, sk } })),
    ),
  );
  await removeSpec(db, DELIVERIES, name, ['spec', 'status']);
  await removeAppliedRevisions(db, name);
}

/** Every registered delivery's spec. */
export async function listDeliveries(db: TableClient): Promise<Delivery[]> {
  const specs = await Promise.all((await listDeliveryNames(db)).map((name) => getDelivery(db, name)));
  return specs.filter((spec): spec is Delivery => spec !== undefined);
}
