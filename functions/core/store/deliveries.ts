import { DeleteCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Delivery } from '../config/index.ts';
import { DELIVERY_INDEX, deliveryKey, queryPartition, type TableClient } from './table-client.ts';

/** Writes a delivery's spec (as registered by the CDK app or `sluice register`). */
export async function putDelivery(db: TableClient, delivery: Delivery, registeredAt: Date): Promise<void> {
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
            },
          },
        },
        { Put: { TableName: db.table, Item: { pk: DELIVERY_INDEX, sk: delivery.name } } },
      ],
    }),
  );
}

export async function getDelivery(db: TableClient, name: string): Promise<Delivery | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: { pk: deliveryKey(name), sk: 'spec' }, ConsistentRead: true }),
  );
  return Item?.spec as Delivery | undefined;
}

export async function listDeliveryNames(db: TableClient): Promise<string[]> {
  return (await queryPartition(db, DELIVERY_INDEX)).map((item) => item.sk as string);
}

/** Removes a delivery's spec and every item under it (status, inventory, events). */
export async function removeDelivery(db: TableClient, name: string): Promise<void> {
  for (const item of await queryPartition(db, deliveryKey(name), { projection: 'pk, sk' })) {
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: item.pk, sk: item.sk } }));
  }
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: DELIVERY_INDEX, sk: name } }));
}

/** Every registered delivery's spec. */
export async function listDeliveries(db: TableClient): Promise<Delivery[]> {
  const specs = await Promise.all((await listDeliveryNames(db)).map((name) => getDelivery(db, name)));
  return specs.filter((spec): spec is Delivery => spec !== undefined);
}
