import { BatchWriteCommand, GetCommand, type BatchWriteCommandOutput } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import type { InventoryEntry } from '../manifests/inventory.ts';
import { fencedTransaction, type Fence } from './lease.ts';
import { deliveryKey, queryPartition, type TableClient } from './table-client.ts';

/** Most entries in one chunk item (short ids); long ids fill a chunk's bytes first. */
export const INVENTORY_CHUNK_SIZE = 1500;

/**
 * Most bytes the entries of one chunk item may take, as DynamoDB sizes them: well under its
 * 400 KB item limit, which counts attribute names and values (the rest of the item is small).
 */
export const INVENTORY_CHUNK_BYTES = 300 * 1024;

/**
 * An upper bound of the bytes `entry` adds to a chunk's `entries` list as DynamoDB sizes it (a
 * map: 3 bytes, plus per field its name, its UTF-8 value and 1 byte; 1 byte in the list). Its
 * JSON is never smaller for string fields: quotes, colon and comma outweigh DynamoDB's overheads.
 */
export function entryBytes(entry: InventoryEntry): number {
  return Buffer.byteLength(JSON.stringify(entry), 'utf8') + 4;
}

/** Entries in order, cut into chunks of at most INVENTORY_CHUNK_SIZE entries and INVENTORY_CHUNK_BYTES. */
export function chunkEntries(entries: readonly InventoryEntry[]): InventoryEntry[][] {
  const chunks: InventoryEntry[][] = [];
  let chunk: InventoryEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entryBytes(entry);
    if (chunk.length > 0 && (chunk.length >= INVENTORY_CHUNK_SIZE || bytes + size > INVENTORY_CHUNK_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(entry);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

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
 * The head is written only while `fence` holds the lease (else LeaseLostError), and only chunks
 * written under an older or equal token are deleted, so a run that lost the lease can neither
 * replace the inventory nor delete the chunks its successor is writing.
 */
export async function writeInventory(
  db: TableClient,
  name: string,
  entries: readonly InventoryEntry[],
  fence: Fence,
): Promise<void> {
  const setId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const pk = deliveryKey(name);
  const chunks = chunkEntries(entries);
  await batchWrite(
    db,
    chunks.map((chunk, i) => ({
      PutRequest: { Item: { pk, sk: chunkKey(setId, i), entries: chunk, fenceToken: fence.token } },
    })),
  );
  await fencedTransaction(db, fence, [
    {
      Put: {
        TableName: db.table,
        Item: { pk, sk: 'inventory', setId, chunks: chunks.length, count: entries.length },
      },
    },
  ]);
  await deleteChunksExcept(db, name, setId, fence.token);
}

async function deleteChunksExcept(
  db: TableClient,
  name: string,
  keepSetId: string,
  token: number,
): Promise<void> {
  const stale = (
    await queryPartition(db, deliveryKey(name), { skPrefix: 'inventory#', projection: 'pk, sk, fenceToken' })
  )
    .filter((item) => !(item.sk as string).startsWith(`inventory#${keepSetId}#`))
    .filter((item) => ((item.fenceToken as number | undefined) ?? 0) <= token)
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
