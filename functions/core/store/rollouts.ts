// A rollout's items, under `rollout#<name>`: its spec (an outline: a count per wave, the members
// being items of their own, rollout-members.ts), the generation it is rolling out
// (`generation`, replaced only conditionally), and its halts and resumes (`action#<sequence>`, kept
// as the audit trail, numbered by the `actions` counter). A lookup item per member names the
// rollout it is in. The digests rolled back live apart (`rollout-rejected#<name>`): removing the
// rollout keeps them, so adding it again does not roll one out.
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Rollout } from '../config/index.ts';
import { outlineOf, type RolloutOutline } from '../config/rollout-outline.ts';
import type { RolloutAction, RolloutGeneration } from '../model/rollout.ts';
import { gateLookupKey } from './lookup-entries.ts';
import { rolloutKey, rolloutMemberKey } from './rollout-keys.ts';
import {
  putMembers,
  readMembership,
  removeOrderedExcept,
  removePlaces,
  storedOutline,
  withMembers,
  type StoredOutline,
} from './rollout-members.ts';
import { getSpec, listSpecNames, putSpec, removeSpec, type SpecKind } from './specs.ts';
import { statusFromItem, type DeliveryStatus } from './status.ts';
import { batchWrite, deliveryKey, queryPartition, type TableClient } from './table-client.ts';

export { rolloutKey, rolloutMemberKey } from './rollout-keys.ts';
const ROLLOUTS: SpecKind = { key: rolloutKey, index: 'rollouts' };

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

const deleteRequests = (entries: readonly RolloutLookup[]) =>
  entries.map((entry) => ({ DeleteRequest: { Key: { pk: entry.pk, sk: entry.sk } } }));

/**
 * Writes a rollout: its members' places and order (rollout-members.ts) and lookups, then its spec
 * (an outline, a count per wave: config/rollout-outline.ts) naming that membership, then removes
 * what it no longer names.
 */
export async function putRollout(db: TableClient, rollout: Rollout, registeredAt: Date): Promise<void> {
  const stored = await getStoredOutline(db, rollout.name);
  const before = stored && (await withMembers(db, stored));
  const outline = outlineOf(rollout);
  const next = rolloutLookups(rollout);
  if (stored?.legacy || stored?.outline.layout !== outline.layout) await putMembers(db, rollout);
  await batchWrite(
    db,
    next.map((entry) => ({ PutRequest: { Item: { ...entry } } })),
  );
  await putSpec(db, ROLLOUTS, outline, registeredAt);
  const same = (a: RolloutLookup) => (b: RolloutLookup) => a.pk === b.pk && a.sk === b.sk;
  await batchWrite(
    db,
    deleteRequests((before ? rolloutLookups(before) : []).filter((entry) => !next.some(same(entry)))),
  );
  if (stored && !stored.legacy && stored.outline.layout !== outline.layout)
    await removePlaces(
      db,
      rollout.name,
      stored.outline.layout,
      before!.waves.flatMap((wave) => wave.deliveries),
    );
  await removeOrderedExcept(db, rollout.name, outline.layout);
}

/** The stored spec of a rollout, without its member lists (what a member's run reads): one small item. */
export async function getStoredOutline(db: TableClient, name: string): Promise<StoredOutline | undefined> {
  const spec = await getSpec<RolloutOutline | Rollout>(db, ROLLOUTS, name);
  return spec && storedOutline(spec);
}

/** A rollout with its member lists (a person's command, a registration): reads every member. */
export async function getRollout(db: TableClient, name: string): Promise<Rollout | undefined> {
  const stored = await getStoredOutline(db, name);
  return stored && withMembers(db, stored);
}

export const listRolloutNames = (db: TableClient): Promise<string[]> => listSpecNames(db, ROLLOUTS);

/** Removes a rollout: its lookups and places, then its spec, generation, actions and ordered members. */
export async function removeRollout(db: TableClient, name: string): Promise<void> {
  const stored = await getStoredOutline(db, name);
  const rollout = stored && (await withMembers(db, stored));
  await batchWrite(db, deleteRequests(rollout ? rolloutLookups(rollout) : []));
  if (stored && !stored.legacy)
    await removePlaces(
      db,
      name,
      stored.outline.layout,
      rollout!.waves.flatMap((wave) => wave.deliveries),
    );
  await removeSpec(db, ROLLOUTS, name);
}

/** The rollout a delivery is in, if any. */
export async function rolloutOfDelivery(db: TableClient, delivery: string): Promise<string | undefined> {
  return (await readMembership(db, delivery))?.rollout;
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
 * The condition that the stored generation is still `generation`: its number, and when and what it
 * started (a rollout removed and added again numbers its generations from 1 again).
 */
const stillGeneration = (generation: RolloutGeneration) => ({
  ConditionExpression: '#n = :number AND #g.startedAt = :startedAt AND #g.digest = :digest',
  ExpressionAttributeNames: { '#n': 'number', '#g': 'generation' },
  ExpressionAttributeValues: {
    ':number': generation.generation,
    ':startedAt': generation.startedAt,
    ':digest': generation.digest,
  },
});

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
        ...(seen ? stillGeneration(seen) : { ConditionExpression: 'attribute_not_exists(pk)' }),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * Records that the generation completed, once (another generation replaced it, even one of the
 * same number: nothing is written).
 */
export async function markCompleted(
  db: TableClient,
  name: string,
  generation: RolloutGeneration,
  at: Date,
): Promise<void> {
  const still = stillGeneration(generation);
  try {
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: rolloutKey(name), sk: 'generation' },
        UpdateExpression: 'SET #g.completedAt = :at',
        ConditionExpression: `${still.ConditionExpression} AND attribute_not_exists(#g.completedAt)`,
        ExpressionAttributeNames: still.ExpressionAttributeNames,
        ExpressionAttributeValues: { ...still.ExpressionAttributeValues, ':at': at.toISOString() },
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
