// The delivery's lease: one writer at a time, judged without trusting anyone else's clock.
//
// Like client-go's leader election, a claimant never compares a time written by another machine
// with its own clock. It observes the lease record and takes it over only after the record has
// not changed (no renewal) for the record's own TTL, measured on the claimant's monotonic clock.
// Every acquisition increments a fencing token; every status, event and inventory write of the
// run is conditional on that token (see `fenceCondition`), so a run that lost the lease (paused,
// partitioned) can no longer change the table, and it checks the lease before each cluster write.
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import { HoldError } from '../errors.ts';
import { deliveryKey, type TableClient } from './table-client.ts';

/** How long a lease lasts without renewal: a crashed run blocks others for about this long. */
export const LEASE_TTL_MS = 60_000;

/** A run's claim on its delivery, carried by every write the run makes to the table. */
export interface Fence {
  readonly delivery: string;
  readonly holder: string;
  readonly token: number;
}

/** Thrown by a fenced write or a lease check once another run holds the delivery's lease. */
/** Another run holds the lease: whatever needed it was not done, and may be tried again shortly. */
export class LeaseHeldError extends HoldError {
  override readonly name = 'LeaseHeldError';
  constructor(readonly delivery: string) {
    super(`delivery '${delivery}' is being reconciled right now; try again in a minute`);
  }
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(readonly delivery: string) {
    super(`lost the lease of delivery '${delivery}' to another run; stopped before the next change`);
  }
}

/** A held lease, renewed in the background until released. */
export interface Lease {
  readonly holder: string;
  readonly fence: Fence;
  /** True once a renewal found another run holding the lease. */
  readonly lost: boolean;
  /**
   * Before a cluster write: throws LeaseLostError once the lease is lost. When the last successful
   * renewal began more than half a TTL ago on this process's clock (the process was paused, or
   * renewals failed), it renews first, so no write goes out on a lease that may have expired.
   */
  check(): Promise<void>;
  release(): Promise<void>;
  /** The status item as the claim left it (what the previous run wrote, and this lease). */
  readonly statusItem: Readonly<Record<string, unknown>>;
}

export interface LeaseOptions {
  /** @default LEASE_TTL_MS */
  readonly ttlMs?: number;
  /** Milliseconds on this process's monotonic clock. @default performance.now */
  readonly elapsed?: () => number;
}

/** The lease fields of the status item. */
interface LeaseRecord {
  readonly leaseHolder?: string;
  readonly leaseToken?: number;
  /** Incremented by every renewal: an observer sees the holder alive when it changes. */
  readonly leaseVersion?: number;
  readonly leaseTtlMs?: number;
}

/** The status-item attributes that belong to the lease, not to the delivery's status. */
export const LEASE_ATTRIBUTES = [
  'leaseHolder',
  'leaseToken',
  'leaseVersion',
  'leaseTtlMs',
  'leaseRenewedAt',
  'leaseExpiresAt',
] as const;

const statusKey = (name: string) => ({ pk: deliveryKey(name), sk: 'status' });

/**
 * A condition for writes on the delivery's status item, or a ConditionCheck on it inside a
 * transaction: the write happens only while `fence` still holds the lease.
 */
export function fenceCondition(fence: Fence): {
  ConditionExpression: string;
  ExpressionAttributeValues: Record<string, unknown>;
} {
  return {
    ConditionExpression: 'leaseHolder = :fenceHolder AND leaseToken = :fenceToken',
    ExpressionAttributeValues: { ':fenceHolder': fence.holder, ':fenceToken': fence.token },
  };
}

async function readLease(db: TableClient, name: string): Promise<LeaseRecord | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: statusKey(name),
      ConsistentRead: true,
      ProjectionExpression: 'leaseHolder, leaseToken, leaseVersion, leaseTtlMs',
    }),
  );
  return Item as LeaseRecord | undefined;
}

const sameRecord = (a: LeaseRecord | undefined, b: LeaseRecord | undefined) =>
  a?.leaseHolder === b?.leaseHolder &&
  (a?.leaseToken ?? 0) === (b?.leaseToken ?? 0) &&
  (a?.leaseVersion ?? 0) === (b?.leaseVersion ?? 0);

/**
 * Watches a held lease until it changes (its holder is alive, or another run took it: resolves
 * false) or stays unchanged for its TTL on this process's own clock (its holder is gone: true).
 */
async function outlived(
  db: TableClient,
  name: string,
  seen: LeaseRecord,
  elapsed: () => number,
): Promise<boolean> {
  const ttl = seen.leaseTtlMs ?? LEASE_TTL_MS;
  const start = elapsed();
  const poll = Math.max(50, Math.min(ttl / 6, 2_000));
  for (;;) {
    const waited = elapsed() - start;
    if (waited > ttl) return true;
    await new Promise((resolve) => setTimeout(resolve, Math.min(poll, ttl - waited + 1)));
    if (!sameRecord(await readLease(db, name), seen)) return false;
  }
}

/** Takes the lease if the record is still `expected` (absent, or the unchanged one observed). */
async function claim(
  db: TableClient,
  name: string,
  holder: string,
  ttlMs: number,
  clock: Clock,
  expected: LeaseRecord | undefined,
): Promise<(Record<string, unknown> & { leaseToken: number }) | undefined> {
  const free = !expected?.leaseHolder;
  try {
    const { Attributes } = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: statusKey(name),
        UpdateExpression:
          'SET leaseHolder = :me, leaseTtlMs = :ttl, leaseVersion = :zero, leaseRenewedAt = :now ' +
          'ADD leaseToken :one REMOVE leaseExpiresAt',
        ConditionExpression: free
          ? 'attribute_not_exists(leaseHolder)'
          : [
              'leaseHolder = :seenHolder',
              expected.leaseVersion === undefined
                ? 'attribute_not_exists(leaseVersion)'
                : 'leaseVersion = :seenVersion',
              expected.leaseToken === undefined
                ? 'attribute_not_exists(leaseToken)'
                : 'leaseToken = :seenToken',
            ].join(' AND '),
        ExpressionAttributeValues: {
          ':me': holder,
          ':ttl': ttlMs,
          ':zero': 0,
          ':one': 1,
          ':now': clock.now().toISOString(),
          ...(!free && {
            ':seenHolder': expected.leaseHolder,
            ...(expected.leaseVersion !== undefined && { ':seenVersion': expected.leaseVersion }),
            ...(expected.leaseToken !== undefined && { ':seenToken': expected.leaseToken }),
          }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as Record<string, unknown> & { leaseToken: number };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Takes the delivery's lease, or returns undefined when another run holds it. A free lease is
 * taken at once; a held one is observed, and taken over only if its holder does not renew it
 * within its TTL (measured here), so a run whose clock is ahead never takes over a live run.
 * The lease is renewed every third of its TTL while held.
 */
export async function acquireLease(
  db: TableClient,
  name: string,
  holder: string,
  clock: Clock,
  options: LeaseOptions = {},
): Promise<Lease | undefined> {
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  const elapsed = options.elapsed ?? (() => performance.now());
  // Most runs find the lease free: claimed at once; a held one is observed first.
  let claimSent = elapsed();
  let claimed = await claim(db, name, holder, ttlMs, clock, undefined);
  if (!claimed) {
    const seen = await readLease(db, name);
    if (seen?.leaseHolder && !(await outlived(db, name, seen, elapsed))) return undefined;
    claimSent = elapsed();
    claimed = await claim(db, name, holder, ttlMs, clock, seen);
    if (!claimed) return undefined;
  }
  const token = claimed.leaseToken;

  const fence: Fence = { delivery: name, holder, token };
  let lost = false;
  // When the last successful renewal (or the claim) was sent: the lease is ours until then + TTL.
  let renewedAt = claimSent;
  const renew = async () => {
    const sent = elapsed();
    try {
      await db.doc.send(
        new UpdateCommand({
          TableName: db.table,
          Key: statusKey(name),
          UpdateExpression: 'SET leaseVersion = leaseVersion + :one, leaseRenewedAt = :now',
          ...withValues(fenceCondition(fence), { ':one': 1, ':now': clock.now().toISOString() }),
        }),
      );
      renewedAt = Math.max(renewedAt, sent);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) lost = true;
      // Any other failure is retried at the next tick; the TTL covers two misses.
    }
  };
  const timer = setInterval(() => void renew(), ttlMs / 3);
  timer.unref();
  return {
    holder,
    fence,
    get lost() {
      return lost;
    },
    async check() {
      if (!lost && elapsed() - renewedAt > ttlMs / 2) await renew();
      if (lost || elapsed() - renewedAt > ttlMs / 2) throw new LeaseLostError(name);
    },
    statusItem: claimed,
    async release() {
      clearInterval(timer);
      try {
        await db.doc.send(
          new UpdateCommand({
            TableName: db.table,
            Key: statusKey(name),
            // The token stays: the next holder's is greater.
            UpdateExpression: 'REMOVE leaseHolder, leaseVersion, leaseTtlMs, leaseRenewedAt',
            ...fenceCondition(fence),
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}

/**
 * Removes the status item a lease left behind for a delivery that has no status (its spec was
 * removed while this run waited for the lease), while `fence` holds it.
 */
export async function dropLeaseOnlyItem(db: TableClient, fence: Fence): Promise<void> {
  const condition = fenceCondition(fence);
  try {
    await db.doc.send(
      new DeleteCommand({
        TableName: db.table,
        Key: statusKey(fence.delivery),
        ConditionExpression: `${condition.ConditionExpression} AND attribute_not_exists(reason)`,
        ExpressionAttributeValues: condition.ExpressionAttributeValues,
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** `condition` with more expression values merged in. */
export function withValues(
  condition: ReturnType<typeof fenceCondition>,
  values: Record<string, unknown>,
): ReturnType<typeof fenceCondition> {
  return {
    ConditionExpression: condition.ConditionExpression,
    ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ...values },
  };
}

type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/** Writes `items` in one transaction with a check that `fence` still holds the delivery's lease. */
export async function fencedTransaction(
  db: TableClient,
  fence: Fence,
  items: readonly TransactItem[],
): Promise<void> {
  try {
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: { TableName: db.table, Key: statusKey(fence.delivery), ...fenceCondition(fence) },
          },
          ...items,
        ],
      }),
    );
  } catch (error) {
    if (
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed'
    )
      throw new LeaseLostError(fence.delivery);
    throw error;
  }
}
