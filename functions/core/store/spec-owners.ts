import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { rolloutKey } from './rollouts.ts';
import { deliveryKey, gateKey, type TableClient } from './table-client.ts';

/** What a spec custom resource writes: a delivery, a gate or a rollout. */
export type SpecResourceKind = 'delivery' | 'gate' | 'rollout';

const PARTITIONS: Record<SpecResourceKind, (name: string) => string> = {
  delivery: deliveryKey,
  gate: gateKey,
  rollout: rolloutKey,
};
const partition = (kind: SpecResourceKind, name: string) => PARTITIONS[kind](name);

/**
 * Which custom resource (by physical id) last wrote a spec. Kept beside the spec, under the same
 * partition, so removing the delivery, gate or rollout removes it too.
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
