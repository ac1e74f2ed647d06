// A rollout's spec as stored does not grow with its fleet: a count per wave; each member's place is
// in the lookup partition a run reads anyway, and the members in order are paged a few at a time.
// Registered again with other members, the old places and order are gone and the new ones read.
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { parseRollout, type Rollout } from '../../../functions/core/config/index.ts';
import { layoutOf } from '../../../functions/core/config/rollout-outline.ts';
import {
  membersBetween,
  placeIn,
  readMembership,
  waveMembersOf,
} from '../../../functions/core/store/rollout-members.ts';
import {
  getRollout,
  getStoredOutline,
  putRollout,
  removeRollout,
  rolloutKey,
} from '../../../functions/core/store/rollouts.ts';
import { queryPartition, tableClient } from '../../../functions/core/store/table-client.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);
const source = { url: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app', tag: 'main' };

/** A rollout of `sizes` members per wave, named `<prefix>-w<wave>-<n>`. */
function rolloutOf(name: string, prefix: string, sizes: readonly number[]): Rollout {
  const parsed = parseRollout({
    name,
    source,
    waves: sizes.map((_, wave) => ({ deliveries: [`${prefix}-w${wave}-*`] })),
    maxParallel: 5,
  });
  return {
    ...parsed,
    waves: parsed.waves.map((wave, index) => ({
      ...wave,
      deliveries: Array.from({ length: sizes[index]! }, (_, n) => `${prefix}-w${index}-${n}`),
    })),
  };
}

describe("a rollout's members", () => {
  it('are items of their own: the spec holds a count per wave, whatever the fleet', async () => {
    const name = uniqueName('fleet');
    const prefix = uniqueName('m');
    const rollout = rolloutOf(name, prefix, [3, 40, 160]);
    await putRollout(db, rollout, new Date());

    const { Item } = await db.doc.send(
      new GetCommand({ TableName: db.table, Key: { pk: rolloutKey(name), sk: 'spec' } }),
    );
    expect(JSON.stringify(Item).length).toBeLessThan(1000);
    const stored = (await getStoredOutline(db, name))!;
    expect(stored.legacy).toBeUndefined();
    expect(stored.outline.waves.map((wave) => wave.size)).toEqual([3, 40, 160]);
    expect(stored.outline.layout).toBe(layoutOf(rollout));

    // A member's place, from the lookup partition a run reads to find its rollout.
    const member = `${prefix}-w1-17`;
    expect(placeIn(stored, await readMembership(db, member), member)).toEqual({ wave: 1, position: 17 });
    expect(placeIn(stored, await readMembership(db, `${prefix}-w2-0`), `${prefix}-w2-0`)).toEqual({
      wave: 2,
      position: 0,
    });
    // Positions across the waves: wave 2 starts after 3 + 40.
    expect(await membersBetween(db, stored, 43, 46)).toEqual([
      `${prefix}-w2-0`,
      `${prefix}-w2-1`,
      `${prefix}-w2-2`,
    ]);
    expect(await waveMembersOf(db, stored, 0)).toEqual(rollout.waves[0]!.deliveries);
    // A person's read gets the whole rollout back.
    expect(await getRollout(db, name)).toEqual(rollout);
  });

  it('registered again with other members: the new places are read, the old ones are gone', async () => {
    const name = uniqueName('fleet');
    const prefix = uniqueName('m');
    const before = rolloutOf(name, prefix, [2, 5]);
    await putRollout(db, before, new Date());
    const oldLayout = layoutOf(before);
    // w1-4 leaves; w0-1 moves to wave 1 (the waves' lists change).
    const after: Rollout = {
      ...before,
      waves: [
        { ...before.waves[0]!, deliveries: [`${prefix}-w0-0`] },
        { ...before.waves[1]!, deliveries: [`${prefix}-w0-1`, ...before.waves[1]!.deliveries.slice(0, 4)] },
      ],
    };
    await putRollout(db, after, new Date());
    const stored = (await getStoredOutline(db, name))!;
    expect(stored.outline.layout).not.toBe(oldLayout);
    expect(stored.outline.waves.map((wave) => wave.size)).toEqual([1, 5]);
    const moved = await readMembership(db, `${prefix}-w0-1`);
    expect(placeIn(stored, moved, `${prefix}-w0-1`)).toEqual({ wave: 1, position: 0 });
    expect([...moved!.places.keys()]).toEqual([stored.outline.layout]);
    expect(await readMembership(db, `${prefix}-w1-4`)).toBeUndefined();
    const ordered = await queryPartition(db, rolloutKey(name), { skPrefix: 'member#' });
    expect(ordered).toHaveLength(6);
    expect(ordered.every((item) => (item.sk as string).startsWith(`member#${stored.outline.layout}#`))).toBe(
      true,
    );
    expect(await getRollout(db, name)).toEqual(after);

    await removeRollout(db, name);
    expect(await getStoredOutline(db, name)).toBeUndefined();
    expect(await readMembership(db, `${prefix}-w0-1`)).toBeUndefined();
    expect(await queryPartition(db, rolloutKey(name))).toEqual([]);
  });

  it('a spec stored before the members were items of their own is read with its lists', async () => {
    const name = uniqueName('fleet');
    const prefix = uniqueName('m');
    const rollout = rolloutOf(name, prefix, [2, 3]);
    // As earlier versions wrote it: the whole rollout in the spec, a lookup item naming the rollout.
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: { pk: rolloutKey(name), sk: 'spec', spec: rollout, registeredAt: new Date().toISOString() },
      }),
    );
    const stored = (await getStoredOutline(db, name))!;
    expect(stored.legacy).toEqual(rollout);
    expect(stored.outline.waves.map((wave) => wave.size)).toEqual([2, 3]);
    expect(placeIn(stored, undefined, `${prefix}-w1-2`)).toEqual({ wave: 1, position: 2 });
    expect(await membersBetween(db, stored, 1, 3)).toEqual([`${prefix}-w0-1`, `${prefix}-w1-0`]);
    expect(await getRollout(db, name)).toEqual(rollout);
  });
});
