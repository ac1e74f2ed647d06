// The per-cluster concurrency limit on DynamoDB Local: runs contending for a cluster never hold
// more than its limit of slots at once, a slot is renewed while held, and a crashed holder's slot
// frees itself when its time runs out.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import { acquireClusterSlot, clusterSlotsKey } from '../../../functions/core/store/cluster-slots.ts';
import { acquireLease } from '../../../functions/core/store/lease.ts';
import { recordRunEnd } from '../../../functions/core/store/run-end.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { queryPartition, tableClient } from '../../../functions/core/store/table-client.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cluster slots', () => {
  it('takes a preferred free slot in one request; a held one is passed over for a free one', async () => {
    const cluster = uniqueName('eks/eu-west-1/hint');
    const client = bed.dynamoDb();
    const sent: string[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'countRequests' },
    );
    const counted = tableClient(client, bed.dynamodb.table);
    const first = await acquireClusterSlot(counted, cluster, 4, 'first', systemClock, { preferred: 2 });
    expect(first?.index).toBe(2);
    expect(sent).toEqual(['PutItemCommand']);
    const second = await acquireClusterSlot(counted, cluster, 4, 'second', systemClock, { preferred: 2 });
    expect(second).toBeDefined();
    expect(second?.index).not.toBe(2);
    await Promise.all([first!.release(), second!.release()]);
  });

  it('24 runs contending for a cluster of limit 4: never more than 4 at once, and every run gets its turn', async () => {
    const cluster = uniqueName('eks/eu-west-1/busy');
    let inFlight = 0;
    let peak = 0;
    const taken = await Promise.all(
      Array.from({ length: 24 }, async (_, run) => {
        const slot = await acquireClusterSlot(db, cluster, 4, `run-${run}`, systemClock, { waitMs: 30_000 });
        if (!slot) return false;
        peak = Math.max(peak, ++inFlight);
        await sleep(150);
        inFlight--;
        await slot.release();
        return true;
      }),
    );
    expect(taken.every(Boolean)).toBe(true);
    expect(peak).toBe(4);
  });

  it('a full cluster: a run that will not wait gets no slot; one freed is taken', async () => {
    const cluster = uniqueName('eks/eu-west-1/full');
    const holders = await Promise.all(
      [1, 2].map((i) => acquireClusterSlot(db, cluster, 2, `holder-${i}`, systemClock, { waitMs: 0 })),
    );
    expect(holders.every((slot) => slot !== undefined)).toBe(true);
    expect(await acquireClusterSlot(db, cluster, 2, 'late', systemClock, { waitMs: 0 })).toBeUndefined();
    await holders[0]!.release();
    const late = await acquireClusterSlot(db, cluster, 2, 'late', systemClock, { waitMs: 0 });
    expect(late?.index).toBe(holders[0]!.index);
    await Promise.all([late!.release(), holders[1]!.release()]);
  });

  it('a live holder renews its slot past its TTL; no one else takes it meanwhile', async () => {
    const cluster = uniqueName('eks/eu-west-1/renewed');
    const holder = await acquireClusterSlot(db, cluster, 1, 'holder', systemClock, { ttlMs: 450 });
    await sleep(1_200);
    expect(await acquireClusterSlot(db, cluster, 1, 'other', systemClock, { waitMs: 0 })).toBeUndefined();
    await holder!.release();
  });

  it("a crashed holder's slot is free once its time has run out, and not before", async () => {
    const cluster = uniqueName('eks/eu-west-1/crashed');
    // What a run that died while holding the only slot leaves behind: the item, no more renewals.
    const heldUntil = Date.now() + 1_500;
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { pk: clusterSlotsKey(cluster), sk: 'slot#000', holder: 'crashed-run', heldUntil },
      }),
    );
    expect(await acquireClusterSlot(db, cluster, 1, 'next', systemClock, { waitMs: 0 })).toBeUndefined();
    const next = await acquireClusterSlot(db, cluster, 1, 'next', systemClock, { waitMs: 10_000 });
    expect(next).toBeDefined();
    expect(Date.now()).toBeGreaterThanOrEqual(heldUntil);
    await next!.release();
  });

  it("a run's end frees its slot with its status; a slot lost meanwhile is left to its new holder", async () => {
    const [name, cluster] = [uniqueName('slot-end'), uniqueName('eks/eu-west-1/end')];
    const slots = async () =>
      (await queryPartition(db, clusterSlotsKey(cluster), { consistent: true })).map((item) => item.holder);
    const end = (message: string) => ({
      name,
      status: { ready: true, reason: 'ReconciliationSucceeded' as const, message, lastReconcileAt: message },
    });

    const first = await acquireLease(db, name, 'first', systemClock);
    const slot = await acquireClusterSlot(db, cluster, 1, 'first', systemClock);
    expect(
      await recordRunEnd(db, end('one'), first!.fence, { freeSlot: slot!.freeing, releaseLease: true }),
    ).toEqual({ leaseReleased: true, slotFreed: true });
    slot!.freed();
    expect(await slots()).toEqual([]);

    // The slot was lost (it expired, another run took it): the status is written, the slot stays.
    const second = await acquireLease(db, name, 'second', systemClock);
    const lost = await acquireClusterSlot(db, cluster, 1, 'second', systemClock);
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          pk: clusterSlotsKey(cluster),
          sk: 'slot#000',
          holder: 'taker',
          heldUntil: Date.now() + 60_000,
        },
      }),
    );
    expect(await recordRunEnd(db, end('two'), second!.fence, { freeSlot: lost!.freeing })).toEqual({
      leaseReleased: false,
      slotFreed: false,
    });
    expect((await getStatus(db, name))?.message).toBe('two');
    expect(await slots()).toEqual(['taker']);
    await Promise.all([lost!.release(), second!.release()]);
    expect(await slots()).toEqual(['taker']);
  });
});
