import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import type { InventoryEntry } from '../manifests/inventory.ts';
import { fencedTransaction, type Fence, type TransactItem } from './lease.ts';
import { batchWrite, deliveryKey, queryPartition, type TableClient } from './table-client.ts';

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
  /** The entries themselves, when they fit in one chunk: then `chunks` is 0. */
  readonly entries?: InventoryEntry[];
}

/** A delivery's inventory as stored: its entries, and whether they are in chunk items (else in the head). */
export interface StoredInventory {
  readonly entries: InventoryEntry[];
  readonly chunked: boolean;
}

const chunkKey = (setId: string, index: number) => `inventory#${setId}#${String(index).padStart(5, '0')}`;

export async function readInventory(db: TableClient, name: string): Promise<InventoryEntry[]> {
  return (await readStoredInventory(db, name)).entries;
}

/** The inventory and how it is stored: one read when it fits in its head item, else the chunks too. */
export async function readStoredInventory(db: TableClient, name: string): Promise<StoredInventory> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: { pk: deliveryKey(name), sk: 'inventory' },
      ConsistentRead: true,
    }),
  );
  const head = Item as InventoryHead | undefined;
  if (!head) return { entries: [], chunked: false };
  if (head.entries) return { entries: head.entries, chunked: false };
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
  return { entries, chunked: true };
}

/**
 * Replaces the inventory. Entries that fit in one chunk go into the head item itself, written in
 * one transaction with the lease check. More are written as a new chunk set, then the head is
 * pointed at it in one put: a run killed half-way leaves the previous inventory whole. Then the
 * chunks of earlier sets are deleted, unless `replacesChunks` is false (the inventory replaced was
 * in its head: there are none, but for those of a chunked write killed before its head, which the
 * next chunked write or the delivery's removal deletes). The head is written only while `fence`
 * holds the lease (else LeaseLostError), and only chunks written under an older or equal token are
 * deleted, so a run that lost the lease can neither replace the inventory nor delete the chunks its
 * successor is writing. `also`: more writes for the head's transaction. Returns whether the new
 * inventory is chunked.
 */
export async function writeInventory(
  db: TableClient,
  name: string,
  entries: readonly InventoryEntry[],
  fence: Fence,
  options: { readonly replacesChunks?: boolean; readonly also?: readonly TransactItem[] } = {},
): Promise<boolean> {
  const setId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const pk = deliveryKey(name);
  const chunks = chunkEntries(entries);
  const inline = chunks.length <= 1;
  if (!inline)
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
        Item: inline
          ? { pk, sk: 'inventory', setId, chunks: 0, count: entries.length, entries: [...entries] }
          : { pk, sk: 'inventory', setId, chunks: chunks.length, count: entries.length },
      },
    },
    ...(options.also ?? []),
  ]);
  if (!inline || options.replacesChunks !== false) await deleteChunksExcept(db, name, setId, fence.token);
  return !inline;
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
