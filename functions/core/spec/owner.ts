import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { deliveryKey, gateKey, type TableClient } from '../store/table-client.ts';
import type { SpecKind } from './resource.ts';

const partition = (kind: SpecKind, name: string) => (kind === 'delivery' ? deliveryKey(name) : gateKey(name));

/**
 * Which custom resource (by physical id) last wrote a spec. Kept beside the spec, under the same
 * partition, so removing the delivery or gate removes it too.
 */
export async function getSpecOwner(
  db: TableClient,
  kind: SpecKind,
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
  kind: SpecKind,
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
