// The delivery's lease: one writer at a time, judged without trusting anyone else's clock.
//
// Like client-go's leader election, a claimant never compares a time written by another machine
// with its own clock. It observes the lease record and takes it over only after the record has
// not changed (no renewal) for the record's own TTL, measured on the claimant's monotonic clock.
// Every acquisition increments a fencing token; every status, event and inventory write of the
// run is conditional on that token (see `fenceCondition`), so a run that lost the lease (paused,
// partitioned) can no longer change the table, and it checks the lease before each cluster write.
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.ts';
import { HoldError, NotRegisteredError } from '../errors.ts';
import { copySpecToStatus } from './deliveries.ts';
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
  /**
   * Told that a fenced write removed RELEASED_LEASE_ATTRIBUTES with what else it wrote (the run's
   * end): renewals stop and `release` sends nothing.
   */
  released(): void;
  /**
   * The status item as the claim left it (what the previous run wrote, this lease, and with
   * `registered` the copy of the spec: see deliveryFromStatusItem).
   */
  readonly statusItem: Readonly<Record<string, unknown>>;
}

export interface LeaseOptions {
  /** @default LEASE_TTL_MS */
  readonly ttlMs?: number;
  /** Milliseconds on this process's monotonic clock. @default performance.now */
  readonly elapsed?: () => number;
  /**
   * Claims only while the delivery is registered (its status item holds the copy of its spec that
   * putDelivery keeps there), in the claim's own condition: for a delivery that is not,
   * NotRegisteredError, and nothing is written. @default false
   */
  readonly registered?: boolean;
}

/** The lease fields of the status item. */
interface LeaseRecord {
  readonly leaseHolder?: string;
  readonly leaseToken?: number;
  /** Incremented by every renewal: an observer sees the holder alive when it changes. */
  readonly leaseVersion?: number;
  readonly leaseTtlMs?: number;
  /** Present while the status item holds a copy of the delivery's spec. */
  readonly specRev?: number;
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

/** What a release removes: the token stays, so the next holder's is greater. */
export const RELEASED_LEASE_ATTRIBUTES = [
  'leaseHolder',
  'leaseVersion',
  'leaseTtlMs',
  'leaseRenewedAt',
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
      ProjectionExpression: 'leaseHolder, leaseToken, leaseVersion, leaseTtlMs, specRev',
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

/**
 * Takes the lease if the record is still `expected` (absent, or the unchanged one observed), and
 * with `registered` only if the item holds a copy of the spec.
 */
async function claim(
  db: TableClient,
  name: string,
  holder: string,
  ttlMs: number,
  clock: Clock,
  expected: LeaseRecord | undefined,
  registered: boolean,
): Promise<(Record<string, unknown> & { leaseToken: number }) | undefined> {
  const free = !expected?.leaseHolder;
  const leaseCondition = free
    ? 'attribute_not_exists(leaseHolder)'
    : [
        'leaseHolder = :seenHolder',
        expected.leaseVersion === undefined
          ? 'attribute_not_exists(leaseVersion)'
          : 'leaseVersion = :seenVersion',
        expected.leaseToken === undefined ? 'attribute_not_exists(leaseToken)' : 'leaseToken = :seenToken',
      ].join(' AND ');
  try {
    const { Attributes } = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: statusKey(name),
        UpdateExpression:
          'SET leaseHolder = :me, leaseTtlMs = :ttl, leaseVersion = :zero, leaseRenewedAt = :now ' +
          'ADD leaseToken :one REMOVE leaseExpiresAt',
        ConditionExpression: registered ? `attribute_exists(specRev) AND ${leaseCondition}` : leaseCondition,
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
 * The lease is renewed every third of its TTL while held. With `registered`, throws
 * NotRegisteredError for a delivery that is not (copying a spec stored before the status item
 * held copies first).
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
  const registered = options.registered ?? false;
  // Most runs find the lease free: claimed at once; a held one is observed first.
  let claimSent = elapsed();
  let claimed = await claim(db, name, holder, ttlMs, clock, undefined, registered);
  if (!claimed) {
    let seen = await readLease(db, name);
    if (registered && seen?.specRev === undefined) {
      // Not registered, or registered before status items held a copy of the spec.
      if (!(await copySpecToStatus(db, name))) throw new NotRegisteredError(name);
      seen = await readLease(db, name);
      if (seen?.specRev === undefined) throw new NotRegisteredError(name);
    }
    if (seen?.leaseHolder && !(await outlived(db, name, seen, elapsed))) return undefined;
    claimSent = elapsed();
    claimed = await claim(db, name, holder, ttlMs, clock, seen, registered);
    if (!claimed) return undefined;
  }
  const token = claimed.leaseToken;

  const fence: Fence = { delivery: name, holder, token };
  let lost = false;
  let releasedAlready = false;
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
    released() {
      clearInterval(timer);
      releasedAlready = true;
    },
    async release() {
      clearInterval(timer);
      if (releasedAlready) return;
      try {
        await db.doc.send(
          new UpdateCommand({
            TableName: db.table,
            Key: statusKey(name),
            UpdateExpression: `REMOVE ${RELEASED_LEASE_ATTRIBUTES.join(', ')}`,
            ...fenceCondition(fence),
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
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

export type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/**
 * Writes a run keeps to send with its next fenced write (at the latest with its end), each saving
 * a request of its own. Only for writes that may wait: one that must be stored before something
 * else happens is written then.
 */
export class PendingWrites {
  private readonly items = new Map<string, TransactItem>();

  /** Keeps `item` under `key`, replacing an item kept under it before. */
  keep(key: string, item: TransactItem): void {
    this.items.set(key, item);
  }

  /** The items kept, to be sent now; none are kept after. */
  take(): TransactItem[] {
    const items = [...this.items.values()];
    this.items.clear();
    return items;
  }
}

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
