import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { deliveryKey, gateKey, type TableClient } from './table-client.ts';

/** What a spec custom resource writes: a delivery or a gate. */
export type SpecResourceKind = 'delivery' | 'gate';

const partition = (kind: SpecResourceKind, name: string) =>
  kind === 'delivery' ? deliveryKey(name) : gateKey(name);

/**
 * Which custom resource (by physical id) last wrote a spec. Kept beside the spec, under the same
 * partition, so removing the delivery or gate removes it too.
 */
export async function getSpecOwner(
  db: TableClient,
  kind: SpecResourceKind,
  name: string,
): Promise<string | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: { pk: partition(kind, name), sk: 'owner' },
      ConsistentRead: true,
    }),
  );
  return typeof Item?.physicalId === 'string' ? Item.physicalId : undefined;
}

export async function putSpecOwner(
  db: TableClient,
  kind: SpecResourceKind,
  name: string,
  physicalId: string,
  at: Date,
): Promise<void> {
  await db.doc.send(
    new PutCommand({
      TableName: db.table,
      Item: { pk: partition(kind, name), sk: 'owner', physicalId, updatedAt: at.toISOString() },
    }),
  );
}
