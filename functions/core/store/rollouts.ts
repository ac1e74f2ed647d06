// A rollout's items, under `rollout#<name>`: its spec, the generation it is rolling out
// (`generation`, replaced only conditionally), and its halts and resumes (`action#<sequence>`, kept
// as the audit trail, numbered by the `actions` counter). A lookup item per member names the
// rollout it is in. The digests rolled back live apart (`rollout-rejected#<name>`): removing the
// rollout keeps them, so adding it again does not roll one out.
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Rollout } from '../config/index.ts';
import type { RolloutAction, RolloutGeneration } from '../model/rollout.ts';
import { gateLookupKey } from './lookup-entries.ts';
import { getSpec, listSpecNames, putSpec, removeSpec, type SpecKind } from './specs.ts';
import { statusFromItem, type DeliveryStatus } from './status.ts';
import { deliveryKey, queryPartition, type TableClient } from './table-client.ts';

export const rolloutKey = (name: string) => `rollout#${name}`;
const ROLLOUTS: SpecKind = { key: rolloutKey, index: 'rollouts' };
/** The partition naming the rollout a delivery is in (one item, the rollout as sort key). */
export const rolloutMemberKey = (delivery: string) => `lookup#rollout-member#${delivery}`;

interface RolloutLookup {
  readonly pk: string;
  readonly sk: string;
  readonly delivery?: string;
}

/**
 * The lookup items a rollout's spec calls for: its members, and its wave gates' members (a gate
 * that opens reconciles them). A wave gate's item has a sort key of the rollout's own, so it never
 * replaces (nor, removed, takes away) the item of a member that names the gate itself.
 */
function rolloutLookups(rollout: Rollout): RolloutLookup[] {
  return rollout.waves.flatMap((wave) => [
    ...wave.deliveries.map((delivery) => ({ pk: rolloutMemberKey(delivery), sk: rollout.name })),
    ...(wave.gate
      ? wave.deliveries.map((delivery) => ({
          pk: gateLookupKey(wave.gate!),
          sk: `${delivery}#rollout#${rollout.name}`,
          delivery,
        }))
      : []),
  ]);
}

/** Writes a rollout's spec and lookups, removing the lookups of what it no longer names. */
export async function putRollout(db: TableClient, rollout: Rollout, registeredAt: Date): Promise<void> {
  const before = await getRollout(db, rollout.name);
  const next = rolloutLookups(rollout);
  const same = (a: RolloutLookup) => (b: RolloutLookup) => a.pk === b.pk && a.sk === b.sk;
  for (const gone of (before ? rolloutLookups(before) : []).filter((entry) => !next.some(same(entry))))
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: gone.pk, sk: gone.sk } }));
  for (const entry of next) await db.doc.send(new PutCommand({ TableName: db.table, Item: { ...entry } }));
  await putSpec(db, ROLLOUTS, rollout, registeredAt);
}

export const getRollout = (db: TableClient, name: string): Promise<Rollout | undefined> =>
  getSpec<Rollout>(db, ROLLOUTS, name);

export const listRolloutNames = (db: TableClient): Promise<string[]> => listSpecNames(db, ROLLOUTS);

/** Removes a rollout: its lookups, then its spec, generation and actions. */
export async function removeRollout(db: TableClient, name: string): Promise<void> {
  const rollout = await getRollout(db, name);
  for (const entry of rollout ? rolloutLookups(rollout) : [])
    await db.doc.send(new DeleteCommand({ TableName: db.table, Key: { pk: entry.pk, sk: entry.sk } }));
  await removeSpec(db, ROLLOUTS, name);
}

/** The rollout a delivery is in, if any. */
export async function rolloutOfDelivery(db: TableClient, delivery: string): Promise<string | undefined> {
  const [item] = await queryPartition(db, rolloutMemberKey(delivery), { consistent: true });
  return item?.sk as string | undefined;
}

export async function getGeneration(db: TableClient, name: string): Promise<RolloutGeneration | undefined> {
  const { Item } = await db.doc.send(
    new GetCommand({
      TableName: db.table,
      Key: { pk: rolloutKey(name), sk: 'generation' },
      ConsistentRead: true,
    }),
  );
  return Item?.generation as RolloutGeneration | undefined;
}

/**
 * Writes the next generation if the stored one is still `seen` (none: there is none yet); false
 * when another writer came first (read it again).
 */
export async function startGeneration(
  db: TableClient,
  name: string,
  next: RolloutGeneration,
  seen: RolloutGeneration | undefined,
): Promise<boolean> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { pk: rolloutKey(name), sk: 'generation', generation: next, number: next.generation },
        ...(seen
          ? {
              ConditionExpression: '#n = :seen',
              ExpressionAttributeNames: { '#n': 'number' },
              ExpressionAttributeValues: { ':seen': seen.generation },
            }
          : { ConditionExpression: 'attribute_not_exists(pk)' }),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Records that the generation completed, once (a newer generation replaced it: nothing is written). */
export async function markCompleted(
  db: TableClient,
  name: string,
  generation: number,
  at: Date,
): Promise<void> {
  try {
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: rolloutKey(name), sk: 'generation' },
        UpdateExpression: 'SET #g.completedAt = :at',
        ConditionExpression: '#n = :generation AND attribute_not_exists(#g.completedAt)',
        ExpressionAttributeNames: { '#g': 'generation', '#n': 'number' },
        ExpressionAttributeValues: { ':generation': generation, ':at': at.toISOString() },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/**
 * Takes the right to publish one event of a rollout (`key`, e.g. `3#wave#2`), once: false when a
 * run took it before. Kept in the rollout's partition, so removing the rollout removes them.
 */
export async function claimRolloutEvent(db: TableClient, name: string, key: string): Promise<boolean> {
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { pk: rolloutKey(name), sk: `event#${key}` },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

const ACTIONS_COUNTER = 'actions';
const actionKey = (sequence: number) => `action#${String(sequence).padStart(10, '0')}`;

/**
 * Records a halt, resume or rollback (kept: the audit trail of who stopped and started the
 * rollout, and why) as the next in the rollout's sequence, if the last one recorded is still
 * `seen` (0: none yet); false when another was recorded meanwhile (read the state again). The
 * sequence, not the clock, orders them: a halt and a resume in the same millisecond stay in order.
 */
export async function recordRolloutAction(
  db: TableClient,
  name: string,
  action: RolloutAction,
  seen: number,
): Promise<boolean> {
  const sequence = seen + 1;
  try {
    await db.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: db.table,
              Item: { pk: rolloutKey(name), sk: ACTIONS_COUNTER, sequence },
              ConditionExpression: seen === 0 ? 'attribute_not_exists(pk)' : '#s = :seen',
              ...(seen > 0 && {
                ExpressionAttributeNames: { '#s': 'sequence' },
                ExpressionAttributeValues: { ':seen': seen },
              }),
            },
          },
          {
            Put: {
              TableName: db.table,
              Item: { pk: rolloutKey(name), sk: actionKey(sequence), action: { ...action, sequence } },
            },
          },
        ],
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
}

/** Records an action after whatever else was recorded (a rollback's record: its generation already started). */
export async function appendRolloutAction(
  db: TableClient,
  name: string,
  action: RolloutAction,
): Promise<void> {
  for (;;) {
    const { Item } = await db.doc.send(
      new GetCommand({
        TableName: db.table,
        Key: { pk: rolloutKey(name), sk: ACTIONS_COUNTER },
        ConsistentRead: true,
      }),
    );
    if (await recordRolloutAction(db, name, action, (Item?.sequence as number | undefined) ?? 0)) return;
  }
}

/** Every halt, resume and rollback recorded for the rollout, in the order recorded. */
export async function listRolloutActions(db: TableClient, name: string): Promise<RolloutAction[]> {
  const items = await queryPartition(db, rolloutKey(name), { skPrefix: 'action#', consistent: true });
  return items.map((item) => item.action as RolloutAction);
}

const rejectedKey = (name: string) => ({ pk: `rollout-rejected#${name}`, sk: 'digests' });

/** Remembers a digest rolled back, beyond the rollout's removal. */
export async function rememberRejected(db: TableClient, name: string, digest: string): Promise<void> {
  await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: rejectedKey(name),
      UpdateExpression: 'ADD digests :digest',
      ExpressionAttributeValues: { ':digest': new Set([digest]) },
    }),
  );
}

/** The digests ever rolled back in a rollout of this name (read when it has no generation yet). */
export async function rejectedDigests(db: TableClient, name: string): Promise<string[]> {
  const { Item } = await db.doc.send(
    new GetCommand({ TableName: db.table, Key: rejectedKey(name), ConsistentRead: true }),
  );
  return [...((Item?.digests as Set<string> | undefined) ?? [])].sort();
}

/** BatchGetItem's limit of keys per request. */
const BATCH = 100;

/** The statuses of many deliveries (strongly consistent), by name; absent for one never reconciled. */
export async function getStatuses(
  db: TableClient,
  names: readonly string[],
): Promise<Map<string, DeliveryStatus | undefined>> {
  const found = new Map<string, DeliveryStatus | undefined>(names.map((name) => [name, undefined]));
  const batches: string[][] = [];
  for (let i = 0; i < names.length; i += BATCH) batches.push(names.slice(i, i + BATCH));
  await Promise.all(
    batches.map(async (batch) => {
      let keys: Record<string, unknown>[] | undefined = batch.map((name) => ({
        pk: deliveryKey(name),
        sk: 'status',
      }));
      for (let attempt = 0; keys && keys.length > 0; attempt++) {
        if (attempt > 0)
          await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
        const answer: BatchGetCommandOutput = await db.doc.send(
          new BatchGetCommand({ RequestItems: { [db.table]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of answer.Responses?.[db.table] ?? [])
          found.set((item.pk as string).slice('delivery#'.length), statusFromItem(item));
        keys = answer.UnprocessedKeys?.[db.table]?.Keys;
      }
    }),
  );
  return found;
}
