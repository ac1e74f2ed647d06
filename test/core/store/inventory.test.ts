// Inventory storage on DynamoDB Local: large inventories in chunks, and replacement that never
// leaves a half-written inventory behind.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import type { InventoryEntry } from '../../../functions/core/manifests/inventory.ts';
import {
  INVENTORY_CHUNK_SIZE,
  readInventory,
  readStoredInventory,
  writeInventory,
} from '../../../functions/core/store/inventory.ts';
import { acquireLease, type Fence } from '../../../functions/core/store/lease.ts';
import { tableClient } from '../../../functions/core/store/table-client.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);

const entries = (count: number, tag: string): InventoryEntry[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `team-${i % 20}_${tag}-object-${i}_apps_Deployment`,
    v: 'v1',
    h: 'f'.repeat(64),
  }));

/** The fence of a lease taken on `name`, as a reconcile holds it while writing its inventory. */
async function fenceFor(name: string): Promise<Fence> {
  const lease = await acquireLease(db, name, 'inventory-test', systemClock);
  if (!lease) throw new Error(`could not take the lease of ${name}`);
  return lease.fence;
}

async function itemCount(name: string): Promise<number> {
  const page = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `delivery#${name}`, ':prefix': 'inventory' },
      Select: 'COUNT',
    }),
  );
  return page.Count ?? 0;
}

describe('inventory store', () => {
  it('stores and reads back 10,000 entries in chunks under the item size limit', async () => {
    const name = uniqueName('inv');
    const big = entries(10_000, 'big');
    await writeInventory(db, name, big, await fenceFor(name));
    expect(await readInventory(db, name)).toEqual(big);
    // head + ceil(10000 / chunk size) chunks
    expect(await itemCount(name)).toBe(1 + Math.ceil(10_000 / INVENTORY_CHUNK_SIZE));
  });

  it('replaces an inventory wholly and removes the chunks of the previous one', async () => {
    const name = uniqueName('inv');
    const fence = await fenceFor(name);
    await writeInventory(db, name, entries(4000, 'old'), fence);
    const replacement = entries(10, 'new');
    await writeInventory(db, name, replacement, fence);
    expect(await readInventory(db, name)).toEqual(replacement);
    // The replacement fits in one chunk: its entries are in the head item, no chunk is left.
    expect(await itemCount(name)).toBe(1);
  });

  it('keeps an inventory that fits in one chunk in its head item: one item, read in one request', async () => {
    const name = uniqueName('inv');
    const fence = await fenceFor(name);
    const small = entries(INVENTORY_CHUNK_SIZE, 'small');
    expect(await writeInventory(db, name, small, fence)).toBe(false);
    expect(await readStoredInventory(db, name)).toEqual({ entries: small, chunked: false });
    expect(await itemCount(name)).toBe(1);
    expect(await writeInventory(db, name, entries(INVENTORY_CHUNK_SIZE + 1, 'more'), fence)).toBe(true);
    expect((await readStoredInventory(db, name)).chunked).toBe(true);
    expect(await itemCount(name)).toBe(3);
  });

  it('reads an empty inventory for a delivery that never applied anything', async () => {
    expect(await readInventory(db, uniqueName('never'))).toEqual([]);
  });
});
