// Inventory chunks are cut by size, not by entry count: an inventory of objects with the longest
// legal names fits DynamoDB's 400 KB item limit (which DynamoDB Local enforces) chunk by chunk.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import type { InventoryEntry } from '../../../functions/core/manifests/inventory.ts';
import {
  chunkEntries,
  INVENTORY_CHUNK_BYTES,
  readInventory,
  writeInventory,
} from '../../../functions/core/store/inventory.ts';
import { acquireLease } from '../../../functions/core/store/lease.ts';
import { tableClient } from '../../../functions/core/store/table-client.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);

/** DynamoDB's 400 KB item limit, attribute names and values included. */
const ITEM_LIMIT = 400 * 1024;

/**
 * An item's size as DynamoDB counts it (developer guide, "Item sizes"): strings as UTF-8 bytes,
 * numbers about one byte per two digits plus one, maps and lists 3 bytes plus 1 per element,
 * plus the name of every attribute and map key.
 */
function dynamoSize(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number')
    return Math.ceil(String(Math.abs(value)).replace(/[.-]/g, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, item) => sum + 1 + dynamoSize(item), 0);
  return (
    3 +
    Object.entries(value as Record<string, unknown>).reduce(
      (sum, [key, item]) => sum + Buffer.byteLength(key, 'utf8') + 1 + dynamoSize(item),
      0,
    )
  );
}

const itemSize = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((sum, [key, value]) => sum + Buffer.byteLength(key) + dynamoSize(value), 0);

/** `count` entries with the longest legal ids: 63-character namespaces, 253-character names and groups, 63-character kinds. */
function longest(count: number): InventoryEntry[] {
  const pad = (prefix: string, length: number) => prefix + 'x'.repeat(length - prefix.length);
  const group = pad('g.', 250) + '.io';
  return Array.from({ length: count }, (_, i) => ({
    id: `${pad(`ns-${i % 7}-`, 63)}_${pad(`object-${i}-`, 253)}_${group}_${pad(`Kind${i % 3}`, 63)}`,
    v: pad('v1alpha', 63),
    h: 'f'.repeat(64),
  }));
}

describe('inventory chunks', () => {
  it('stay under INVENTORY_CHUNK_BYTES, well under the item limit, however long the ids', () => {
    const entries = longest(3000);
    const chunks = chunkEntries(entries);
    expect(chunks.flat()).toEqual(entries);
    expect(chunks.length).toBeGreaterThan(1);
    const header = {
      pk: `delivery#${'d'.repeat(63)}`,
      sk: 'inventory#lz1k2j3abcdef#00000',
      fenceToken: 2 ** 40,
    };
    for (const chunk of chunks) {
      expect(dynamoSize(chunk)).toBeLessThanOrEqual(INVENTORY_CHUNK_BYTES);
      expect(itemSize({ ...header, entries: chunk })).toBeLessThan(ITEM_LIMIT);
    }
    expect(INVENTORY_CHUNK_BYTES).toBeLessThanOrEqual(0.75 * ITEM_LIMIT);
  });

  it('keep short ids to at most 1,500 entries a chunk, in order', () => {
    const entries = Array.from({ length: 3001 }, (_, i) => ({ id: `n_c${i}__ConfigMap`, v: 'v1' }));
    expect(chunkEntries(entries).map((chunk) => chunk.length)).toEqual([1500, 1500, 1]);
    expect(chunkEntries([])).toEqual([]);
  });

  it('store and read back 3,000 entries with the longest legal ids on DynamoDB Local', async () => {
    const name = uniqueName('inv-long');
    const lease = await acquireLease(db, name, 'test', systemClock);
    try {
      const entries = longest(3000);
      await writeInventory(db, name, entries, lease!.fence);
      expect(await readInventory(db, name)).toEqual(entries);
      // And replaced by a smaller one, as a prune does.
      await writeInventory(db, name, entries.slice(0, 10), lease!.fence);
      expect(await readInventory(db, name)).toEqual(entries.slice(0, 10));
    } finally {
      await lease?.release();
    }
  });
});
