// The lease on DynamoDB Local: expiry judged on the claimant's own clock, fencing tokens on every
// status, event and inventory write, and a holder that checks before it writes.
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../functions/core/clock.ts';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import { NotRegisteredError } from '../../../functions/core/errors.ts';
import {
  deliveryFromStatusItem,
  getDelivery,
  putDelivery,
  removeDelivery,
} from '../../../functions/core/store/deliveries.ts';
import { listEvents, recordEvent } from '../../../functions/core/store/events.ts';
import { readInventory, writeInventory } from '../../../functions/core/store/inventory.ts';
import { acquireLease, LeaseLostError } from '../../../functions/core/store/lease.ts';
import { getStatus, updateStatus } from '../../../functions/core/store/status.ts';
import { deliveryKey, tableClient } from '../../../functions/core/store/table-client.ts';
import { leaveLease } from '../../support/lease.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);
const ahead: Clock = { ...systemClock, now: () => new Date(Date.now() + 90_000) };
const entry = (name: string) => ({ id: `ns_${name}__ConfigMap`, v: 'v1', h: 'a'.repeat(64) });

describe('lease expiry', () => {
  it('a claimant whose clock is 90 s ahead never takes over a live holder', async () => {
    const name = uniqueName('skew');
    const holder = await acquireLease(db, name, 'holder', systemClock, { ttlMs: 600 });
    expect(holder).toBeDefined();
    // Several TTLs by the claimant's clock have passed; the holder renews, so the lease holds.
    expect(await acquireLease(db, name, 'claimant', ahead)).toBeUndefined();
    expect(await acquireLease(db, name, 'claimant', ahead, { ttlMs: 600 })).toBeUndefined();
    await holder?.check();
    expect(holder?.lost).toBe(false);
    await holder?.release();
  });

  it('a lease left unrenewed is taken over after its TTL, measured by the claimant, with a greater token', async () => {
    const name = uniqueName('dead');
    await leaveLease(db, name, 'dead-run', 500);
    let now = 0;
    const lease = await acquireLease(db, name, 'claimant', systemClock, {
      elapsed: () => (now += 100), // each look at this process's clock: 100 ms later
    });
    expect(lease?.holder).toBe('claimant');
    expect(now).toBeGreaterThan(500);
    expect(lease?.fence.token).toBe(2);
    await lease?.release();
  });
});

describe('fenced writes', () => {
  it('status, event and inventory writes of a run that lost its lease fail and change nothing', async () => {
    const name = uniqueName('fence');
    const first = await acquireLease(db, name, 'first', systemClock);
    if (!first) throw new Error('no lease');
    const status = { ready: true, reason: 'ReconciliationSucceeded', message: 'ok' } as const;
    await updateStatus(db, name, { ...status, lastReconcileAt: 'a' }, first.fence);
    await writeInventory(db, name, [entry('a')], first.fence);

    await leaveLease(db, name, 'second'); // another run took over (first was frozen)
    await expect(
      updateStatus(db, name, { ...status, message: 'stale', lastReconcileAt: 'b' }, first.fence),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      recordEvent(
        db,
        {
          delivery: name,
          outcome: 'Succeeded',
          reason: 'x',
          message: 'stale',
          time: new Date().toISOString(),
        },
        first.fence,
      ),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(writeInventory(db, name, [entry('stale')], first.fence)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(first.check()).resolves.toBeUndefined(); // renewed recently: no read needed yet
    expect((await getStatus(db, name))?.message).toBe('ok');
    expect(await listEvents(db, name)).toEqual([]);
    expect(await readInventory(db, name)).toEqual([entry('a')]);
    await first.release(); // a no-op: it no longer holds it
  });

  it('a holder whose last renewal is older than half its TTL renews before writing, and stops if it lost', async () => {
    const name = uniqueName('check');
    let now = 0;
    const lease = await acquireLease(db, name, 'paused', systemClock, { ttlMs: 60_000, elapsed: () => now });
    if (!lease) throw new Error('no lease');
    now = 31_000; // frozen for 31 s, no renewal ran
    await lease.check(); // still ours: renewed now
    await leaveLease(db, name, 'other');
    now = 62_000;
    await expect(lease.check()).rejects.toBeInstanceOf(LeaseLostError);
    expect(lease.lost).toBe(true);
  });

  it('an older holder never deletes the inventory chunks a newer holder wrote', async () => {
    const name = uniqueName('chunks');
    const older = await acquireLease(db, name, 'older', systemClock);
    if (!older) throw new Error('no lease');
    // Chunks written under a greater token (a successor, before it moved the inventory head).
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          pk: deliveryKey(name),
          sk: 'inventory#successor#00000',
          entries: [entry('b')],
          fenceToken: older.fence.token + 1,
        },
      }),
    );
    await writeInventory(db, name, [entry('a')], older.fence);
    const left = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': deliveryKey(name), ':prefix': 'inventory#successor#' },
      }),
    );
    expect(left.Items).toHaveLength(1);
    await older.release();
  });
});

describe('a claim of a registered delivery', () => {
  const spec = (name: string) =>
    parseDelivery({
      name,
      source: { url: 'oci://registry.example/app', tag: 'main' },
      cluster: { kubeconfig: 'kc' },
    });
  const statusItem = async (name: string) =>
    (
      await db.doc.send(
        new GetCommand({
          TableName: db.table,
          Key: { pk: deliveryKey(name), sk: 'status' },
          ConsistentRead: true,
        }),
      )
    ).Item;

  it('reads the spec with the lease; an unregistered or removed delivery is refused and nothing is written', async () => {
    const name = uniqueName('registered');
    await expect(acquireLease(db, name, 'run', systemClock, { registered: true })).rejects.toBeInstanceOf(
      NotRegisteredError,
    );
    expect(await statusItem(name)).toBeUndefined();

    await putDelivery(db, spec(name), new Date());
    const lease = await acquireLease(db, name, 'run', systemClock, { registered: true });
    expect(deliveryFromStatusItem(lease!.statusItem)).toEqual(await getDelivery(db, name));
    expect(await getStatus(db, name)).toBeUndefined(); // the copy is no status
    await lease!.release();

    await removeDelivery(db, name);
    await expect(acquireLease(db, name, 'run', systemClock, { registered: true })).rejects.toBeInstanceOf(
      NotRegisteredError,
    );
    expect(await statusItem(name)).toBeUndefined();
  });

  it('copies a spec stored before status items held one, then claims', async () => {
    const name = uniqueName('legacy');
    await putDelivery(db, spec(name), new Date());
    await leaveLease(db, name, 'old-run', 300); // a lease an older version left, on a status item
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: deliveryKey(name), sk: 'status' },
        UpdateExpression: 'REMOVE spec, specRev',
      }),
    );
    const lease = await acquireLease(db, name, 'run', systemClock, { registered: true });
    expect(lease?.fence.token).toBe(2);
    expect(deliveryFromStatusItem(lease!.statusItem)?.name).toBe(name);
    await lease!.release();
  });
});
