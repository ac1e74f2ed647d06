// A counting semaphore per cluster in the single table: at most `limit` reconciles apply to one
// cluster at once. Slot i of a cluster is one item; a run takes a free or expired one with a
// conditional write, renews it while it works and deletes it when done. A run that crashed frees
// its slot when the slot's time runs out.
//
// Unlike the delivery lease, expiry is judged on the wall clocks of the runs: the limit protects a
// cluster's API server from load, it guards no write, so a clock a few seconds off only lets a slot
// be taken a few seconds early or late.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { poll, type Clock } from '../clock.ts';
import type { TransactItem } from './lease.ts';
import { queryPartition, type TableClient } from './table-client.ts';

/** How long a slot lasts without renewal: a crashed run holds its cluster's slot about this long. */
export const SLOT_TTL_MS = 120_000;
/** How long a run waits for a slot before it is held and retried later. */
export const SLOT_WAIT_MS = 20_000;
const POLL_MS = 500;

export const clusterSlotsKey = (cluster: string) => `cluster#${cluster}`;
const slotName = (index: number) => `slot#${String(index).padStart(3, '0')}`;

export interface ClusterSlot {
  readonly index: number;
  /** Stops renewing and frees the slot (only if this run still holds it). */
  release(): Promise<void>;
  /**
   * The Delete that frees the slot only while this run holds it, for another write's transaction
   * (a failed condition there: the slot was lost, and is not this run's to free).
   */
  readonly freeing: TransactItem;
  /** Told that a write freed the slot with `freeing`: renewals stop and `release` sends nothing. */
  freed(): void;
}

export interface SlotOptions {
  /** @default SLOT_TTL_MS */
  readonly ttlMs?: number;
  /** @default SLOT_WAIT_MS */
  readonly waitMs?: number;
  readonly log?: (message: string) => void;
  /** A slot to try first, before looking at which are held (the one this container held last). */
  readonly preferred?: number;
}

/**
 * Takes one of `limit` slots of `cluster` for `holder`, waiting up to `waitMs` while all are held
 * (looking again every half second or so); undefined when none came free in time. While held the
 * slot is renewed every third of its TTL.
 */
export async function acquireClusterSlot(
  db: TableClient,
  cluster: string,
  limit: number,
  holder: string,
  clock: Clock,
  options: SlotOptions = {},
): Promise<ClusterSlot | undefined> {
  const ttlMs = options.ttlMs ?? SLOT_TTL_MS;
  const pk = clusterSlotsKey(cluster);
  const { preferred } = options;
  if (preferred !== undefined && preferred < limit) {
    const now = clock.now().getTime();
    if (await take(db, pk, preferred, holder, now, ttlMs))
      return heldSlot(db, pk, preferred, holder, clock, ttlMs, options);
  }
  let slot: ClusterSlot | undefined;
  const takeAFreeSlot = async (): Promise<boolean> => {
    const now = clock.now().getTime();
    const held = new Set(
      (await queryPartition(db, pk, { consistent: true }))
        .filter((item) => (item.heldUntil as number) > now)
        .map((item) => item.sk as string),
    );
    const free = Array.from({ length: limit }, (_, i) => i).filter((i) => !held.has(slotName(i)));
    // Contenders start at different free slots, so that most first tries succeed.
    const start = free.length > 0 ? Math.floor(Math.random() * free.length) : 0;
    for (const index of [...free.slice(start), ...free.slice(0, start)]) {
      if (await take(db, pk, index, holder, now, ttlMs)) {
        slot = heldSlot(db, pk, index, holder, clock, ttlMs, options);
        return true;
      }
    }
    return false;
  };
  const taken = await poll({
    clock,
    every: () => POLL_MS / 2 + Math.random() * POLL_MS,
    timeout: options.waitMs ?? SLOT_WAIT_MS,
    until: takeAFreeSlot,
  });
  return taken ? slot : undefined;
}

async function take(
  db: TableClient,
  pk: string,
  index: number,
  holder: string,
  now: number,
  ttlMs: number,
): Promise<boolean> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { pk, sk: slotName(index), holder, heldUntil: now + ttlMs },
        ConditionExpression: 'attribute_not_exists(pk) OR heldUntil <= :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function heldSlot(
  db: TableClient,
  pk: string,
  index: number,
  holder: string,
  clock: Clock,
  ttlMs: number,
  options: SlotOptions,
): ClusterSlot {
  const key = { pk, sk: slotName(index) };
  const renewal = setInterval(() => {
    db.doc
      .send(
        new UpdateCommand({
          TableName: db.table,
          Key: key,
          UpdateExpression: 'SET heldUntil = :until',
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: { ':until': clock.now().getTime() + ttlMs, ':holder': holder },
        }),
      )
      .catch((error: unknown) => {
        // Lost (it expired and another run took it) or unreachable: the limit may be exceeded by one for a while.
        options.log?.(`could not renew slot ${index} of ${pk}: ${String(error)}`);
        clearInterval(renewal);
      });
  }, ttlMs / 3);
  renewal.unref();
  const freeing = {
    TableName: db.table,
    Key: key,
    ConditionExpression: 'holder = :holder',
    ExpressionAttributeValues: { ':holder': holder },
  };
  let freed = false;
  return {
    index,
    freeing: { Delete: freeing },
    freed() {
      clearInterval(renewal);
      freed = true;
    },
    async release() {
      clearInterval(renewal);
      if (freed) return;
      try {
        await db.doc.send(new DeleteCommand(freeing));
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}
