// The ids of the objects a delivery's latest resolved revision desires, stored by every run (also
// one held by a gate, a dependency or the brake), so that removing another delivery on the same
// cluster can tell what this one needs without building its artifact again.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Fence, TransactItem } from './lease.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

/** What a delivery's latest resolved revision desires. */
export interface DesiredSet {
  /** The revision built (`<tag>@sha256:<hex>`). */
  readonly revision: string;
  /** Inventory ids (`<namespace>_<name>_<group>_<kind>`) of the objects it applies. */
  readonly ids: readonly string[];
  /** When it was stored (ISO 8601). */
  readonly storedAt: string;
}

/** Well under DynamoDB's 400 KB item limit; gzipped ids of ~40 bytes take a few bytes each. */
const MAX_BYTES = 350 * 1024;

const KEY = (name: string) => ({ pk: deliveryKey(name), sk: 'desired' });

/**
 * The Put that stores `set`, for a transaction fenced by `fence` (it is no write without the
 * fence's check). Throws, naming the delivery, when the set does not fit in one item.
 */
export function desiredSetPut(db: TableClient, name: string, set: DesiredSet, fence: Fence): TransactItem {
  const ids = gzipSync(JSON.stringify(set.ids));
  if (ids.byteLength > MAX_BYTES)
    throw new Error(
      `the desired set of delivery '${name}' (${set.ids.length} ids, ${ids.byteLength} bytes gzipped) does not fit in one table item`,
    );
  return {
    Put: {
      TableName: db.table,
      Item: { ...KEY(name), revision: set.revision, storedAt: set.storedAt, ids, fenceToken: fence.token },
    },
  };
}

/** The delivery's stored desired set, or undefined when no run has stored one. */
export async function readDesiredSet(db: TableClient, name: string): Promise<DesiredSet | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: KEY(name), ConsistentRead: true }),
  );
  if (!Item) return undefined;
  const ids = JSON.parse(gunzipSync(Item.ids as Uint8Array).toString('utf8')) as unknown;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string'))
    throw new Error(`the stored desired set of delivery '${name}' is not a list of ids`);
  return { revision: String(Item.revision), ids, storedAt: String(Item.storedAt) };
}
