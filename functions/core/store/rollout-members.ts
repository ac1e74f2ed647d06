// A rollout's members, apart from its spec (config/rollout-outline.ts), so that the spec a member's
// run reads does not grow with the fleet:
// - in order, under the rollout's partition: `member#<layout>#<position across the waves>`, with
//   the member's name and wave; a wave's next members are one Query of a few of them;
// - each member's place, in the lookup partition a run reads anyway to find its rollout:
//   `lookup#rollout-member#<delivery>` / `<rollout>#place#<layout>`, with its wave and position.
// A membership's items are written before the spec that names its layout, and those of the layout
// it replaces removed after: a run reads the places of the layout its spec names.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Rollout } from '../config/index.ts';
import {
  layoutOf,
  outlineOf,
  waveOffset,
  type MemberPlace,
  type RolloutOutline,
} from '../config/rollout-outline.ts';
import { rolloutKey, rolloutMemberKey } from './rollout-keys.ts';
import { batchWrite, queryPartition, type TableClient, type WriteRequest } from './table-client.ts';

const POSITION_DIGITS = 8;
const memberPrefix = (layout: string) => `member#${layout}#`;
const memberSk = (layout: string, index: number) =>
  `${memberPrefix(layout)}${String(index).padStart(POSITION_DIGITS, '0')}`;
const PLACE = '#place#';
export const placeSk = (rollout: string, layout: string) => `${rollout}${PLACE}${layout}`;

/**
 * A rollout's spec as stored: its outline, and for a spec stored before the members were items
 * of their own (its waves list them), that spec, whose lists then serve as the members.
 */
export interface StoredOutline {
  readonly outline: RolloutOutline;
  readonly legacy?: Rollout;
}

/** The stored spec (either form) as an outline. */
export function storedOutline(spec: RolloutOutline | Rollout): StoredOutline {
  const legacy = spec.waves.some((wave) => Array.isArray((wave as { deliveries?: unknown }).deliveries));
  return legacy
    ? { outline: outlineOf(spec as Rollout), legacy: spec as Rollout }
    : { outline: spec as RolloutOutline };
}

/** A delivery's rollout, and its place in each membership layout stored. */
export interface Membership {
  readonly rollout: string;
  readonly places: ReadonlyMap<string, MemberPlace>;
}

/** The membership of a delivery from its lookup partition's items (one Query). */
export function membershipFromItems(items: readonly Record<string, unknown>[]): Membership | undefined {
  const named = items.find((item) => !(item.sk as string).includes('#'));
  if (!named) return undefined;
  const rollout = named.sk as string;
  const places = new Map<string, MemberPlace>();
  for (const item of items) {
    const sk = item.sk as string;
    if (!sk.startsWith(`${rollout}${PLACE}`)) continue;
    places.set(sk.slice(`${rollout}${PLACE}`.length), {
      wave: item.wave as number,
      position: item.position as number,
    });
  }
  return { rollout, places };
}

export async function readMembership(db: TableClient, delivery: string): Promise<Membership | undefined> {
  return membershipFromItems(await queryPartition(db, rolloutMemberKey(delivery), { consistent: true }));
}

/** The member's place in the membership the stored spec names (undefined: not a member of it). */
export function placeIn(stored: StoredOutline, membership: Membership | undefined, delivery: string) {
  if (stored.legacy) {
    const wave = stored.legacy.waves.findIndex((w) => w.deliveries.includes(delivery));
    return wave < 0 ? undefined : { wave, position: stored.legacy.waves[wave]!.deliveries.indexOf(delivery) };
  }
  return membership?.rollout === stored.outline.name
    ? membership.places.get(stored.outline.layout)
    : undefined;
}

/** Writes the ordered members and the places of `rollout`'s membership (layoutOf(rollout)). */
export async function putMembers(db: TableClient, rollout: Rollout): Promise<void> {
  const layout = layoutOf(rollout);
  const requests: WriteRequest[] = [];
  let index = 0;
  rollout.waves.forEach((wave, w) =>
    wave.deliveries.forEach((delivery, position) => {
      requests.push(
        {
          PutRequest: {
            Item: { pk: rolloutKey(rollout.name), sk: memberSk(layout, index++), delivery, wave: w },
          },
        },
        {
          PutRequest: {
            Item: { pk: rolloutMemberKey(delivery), sk: placeSk(rollout.name, layout), wave: w, position },
          },
        },
      );
    }),
  );
  await batchWrite(db, requests);
}

/** Removes the places of `members` in membership `layout`. */
export async function removePlaces(
  db: TableClient,
  name: string,
  layout: string,
  members: readonly string[],
): Promise<void> {
  await batchWrite(
    db,
    members.map((delivery) => ({
      DeleteRequest: { Key: { pk: rolloutMemberKey(delivery), sk: placeSk(name, layout) } },
    })),
  );
}

/** Removes the ordered members of every layout but `keep` (a registration that stopped half-way left its own). */
export async function removeOrderedExcept(db: TableClient, name: string, keep?: string): Promise<void> {
  const ordered = await queryPartition(db, rolloutKey(name), { skPrefix: 'member#', projection: 'pk, sk' });
  await batchWrite(
    db,
    ordered
      .filter((item) => keep === undefined || !(item.sk as string).startsWith(memberPrefix(keep)))
      .map((item) => ({ DeleteRequest: { Key: { pk: item.pk as string, sk: item.sk as string } } })),
  );
}

/**
 * The members at positions `from` (inclusive) to `to` (exclusive) in the order of every member
 * (the waves one after the other): one Query of as many small items, whatever the fleet's size.
 */
export async function membersBetween(
  db: TableClient,
  stored: StoredOutline,
  from: number,
  to: number,
): Promise<string[]> {
  if (to <= from) return [];
  if (stored.legacy) return stored.legacy.waves.flatMap((wave) => wave.deliveries).slice(from, to);
  const { name, layout } = stored.outline;
  const items = await queryRange(db, rolloutKey(name), memberSk(layout, from), memberSk(layout, to - 1));
  return items.map((item) => item.delivery as string);
}

/** The members of wave `wave` (0-based), in order: a repair's or a person's read, not a run's. */
export const waveMembersOf = (db: TableClient, stored: StoredOutline, wave: number): Promise<string[]> => {
  const from = waveOffset(stored.outline, wave);
  return membersBetween(db, stored, from, from + (stored.outline.waves[wave]?.size ?? 0));
};

/** The rollout with its member lists, read from the ordered members. */
export async function withMembers(db: TableClient, stored: StoredOutline): Promise<Rollout> {
  if (stored.legacy) return stored.legacy;
  const { layout: _layout, waves, ...rest } = stored.outline;
  const lists = await Promise.all(waves.map((_, index) => waveMembersOf(db, stored, index)));
  return {
    ...rest,
    waves: waves.map(({ size: _size, ...wave }, index) => ({ ...wave, deliveries: lists[index]! })),
  };
}

async function queryRange(
  db: TableClient,
  pk: string,
  first: string,
  last: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
        ExpressionAttributeValues: { ':pk': pk, ':first': first, ':last': last },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
