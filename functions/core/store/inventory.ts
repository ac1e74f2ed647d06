import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  type BatchWriteCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import type { InventoryEntry } from '../manifests/inventory.ts';
import { deliveryKey, queryPartition, type TableClient } from './table-client.ts';

/** Entries per chunk item: about 150 bytes each keeps a chunk well under DynamoDB's 400 KB item limit. */
export const INVENTORY_CHUNK_SIZE = 1500;

interface InventoryHead {
  readonly setId: string;
  readonly chunks: number;
  readonly count: number;
}

const chunkKey = (setId: string, index: number) => `inventory#${setId}#${String(index).padStart(5, '0')}`;

export async function readInventory(db: TableClient, name: string): Promise<InventoryEntry[]> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: { pk: deliveryKey(name), sk: 'inventory' },
      ConsistentRead: true,
    }),
  );
  const head = Item as InventoryHead | undefined;
  if (!head) return [];
  const chunks = await queryPartition(db, deliveryKey(name), {
    skPrefix: `inventory#${head.setId}#`,
    consistent: true,
  });
  const entries = chunks.flatMap((item) => item.entries as InventoryEntry[]);
  if (entries.length !== head.count) {
    throw new Error(
      `inventory of delivery '${name}' is incomplete: ${entries.length} of ${head.count} entries readable`,
    );
  }
  return entries;
}

/**
 * Replaces the inventory: writes the new chunk set, then points the head at it in one put, then
 * deletes the chunks of earlier sets. A run killed half-way leaves the previous inventory whole.
 */
export async function writeInventory(
  db: TableClient,
  name: string,
  entries: readonly InventoryEntry[],
): Promise<void> {
  const setId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const pk = deliveryKey(name);
  const chunks: InventoryEntry[][] = [];
  for (let i = 0; i < entries.length; i += INVENTORY_CHUNK_SIZE)
    chunks.push(entries.slice(i, i + INVENTORY_CHUNK_SIZE));
  await batchWrite(
    db,
    chunks.map((chunk, i) => ({ PutRequest: { Item: { pk, sk: chunkKey(setId, i), entries: chunk } } })),
  );
  await db.doc.send(
    new PutCommand({
      TableName: db.table,
      Item: { pk, sk: 'inventory', setId, chunks: chunks.length, count: entries.length },
    }),
  );
  await deleteChunksExcept(db, name, setId);
}

async function deleteChunksExcept(db: TableClient, name: string, keepSetId: string): Promise<void> {
  const stale = (
    await queryPartition(db, deliveryKey(name), { skPrefix: 'inventory#', projection: 'pk, sk' })
  )
    .filter((item) => !(item.sk as string).startsWith(`inventory#${keepSetId}#`))
    .map((item) => ({ DeleteRequest: { Key: { pk: item.pk as string, sk: item.sk as string } } }));
  await batchWrite(db, stale);
}

type WriteRequest = NonNullable<
  ConstructorParameters<typeof BatchWriteCommand>[0]['RequestItems']
>[string][number];

async function batchWrite(db: TableClient, requests: readonly WriteRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: WriteRequest[] | undefined = requests.slice(i, i + 25);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error(`DynamoDB kept ${pending.length} inventory writes unprocessed`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result: BatchWriteCommandOutput = await db.doc.send(
        new BatchWriteCommand({ RequestItems: { [db.table]: pending } }),
      );
      pending = result.UnprocessedItems?.[db.table];
    }
  }
}
