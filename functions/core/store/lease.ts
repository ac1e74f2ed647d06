import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../clock.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

/** How long a lease lasts without renewal: a crashed run blocks others for at most this long. */
export const LEASE_TTL_MS = 60_000;

/** A held lease, renewed in the background until released. `lost` turns true if another run took it over. */
export interface Lease {
  readonly holder: string;
  lost: boolean;
  release(): Promise<void>;
}

async function claim(db: TableClient, name: string, holder: string, clock: Clock): Promise<boolean> {
  const now = clock.now().getTime();
  try {
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: deliveryKey(name), sk: 'status' },
        UpdateExpression: 'SET leaseHolder = :me, leaseExpiresAt = :expires',
        ConditionExpression:
          'attribute_not_exists(leaseHolder) OR leaseExpiresAt < :now OR leaseHolder = :me',
        ExpressionAttributeValues: { ':me': holder, ':expires': now + LEASE_TTL_MS, ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * Takes the delivery's lease with a conditional write, or returns undefined when another run
 * holds an unexpired one. The lease is renewed every third of its TTL while held.
 */
export async function acquireLease(
  db: TableClient,
  name: string,
  holder: string,
  clock: Clock,
): Promise<Lease | undefined> {
  if (!(await claim(db, name, holder, clock))) return undefined;
  const lease: Lease = {
    holder,
    lost: false,
    async release() {
      clearInterval(timer);
      try {
        await db.doc.send(
          new UpdateCommand({
            TableName: db.table,
            Key: { pk: deliveryKey(name), sk: 'status' },
            UpdateExpression: 'REMOVE leaseHolder, leaseExpiresAt',
            ConditionExpression: 'leaseHolder = :me',
            ExpressionAttributeValues: { ':me': holder },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
  const timer = setInterval(() => {
    claim(db, name, holder, clock).then(
      (held) => {
        if (!held) lease.lost = true;
      },
      () => undefined, // a failed renewal is retried at the next tick; the TTL covers two misses
    );
  }, LEASE_TTL_MS / 3);
  timer.unref();
  return lease;
}
