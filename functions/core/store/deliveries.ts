import { DeleteCommand, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Delivery } from '../config/index.ts';
import { DELIVERY_INDEX, deliveryKey, type TableClient } from './table-client.ts';

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
  const names: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': DELIVERY_INDEX },
        ExclusiveStartKey: start,
      }),
    );
    names.push(...(page.Items ?? []).map((item) => item.sk as string));
    start = page.LastEvaluatedKey;
  } while (start);
  return names;
}

/** Removes a delivery's spec and every item under it (status, inventory, events). */
export async function removeDelivery(db: TableClient, name: string): Promise<void> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': deliveryKey(name) },
        ProjectionExpression: 'pk, sk',
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: item.pk, sk: item.sk } }));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: DELIVERY_INDEX, sk: name } }));
}
