// A rollout's records on DynamoDB Local: its wave gates' lookup items live beside (never over) a
// member's own item for the same gate; its actions are numbered, so two writers that read the same
// state cannot both record, and the order does not depend on the clock.
import { describe, expect, it } from 'vitest';
import { parseDelivery, parseRollout } from '../../../functions/core/config/index.ts';
import type { RolloutAction } from '../../../functions/core/model/rollout.ts';
import { deliveriesUsingGate } from '../../../functions/core/store/delivery-lookups.ts';
import { putDelivery } from '../../../functions/core/store/deliveries.ts';
import {
  appendRolloutAction,
  listRolloutActions,
  putRollout,
  recordRolloutAction,
  removeRollout,
} from '../../../functions/core/store/rollouts.ts';
import { tableClient } from '../../../functions/core/store/table-client.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const db = tableClient(bed.dynamoDb(), bed.dynamodb.table);
const source = { url: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app', tag: 'main' };

const action = (kind: RolloutAction['action'], by: string): RolloutAction => ({
  action: kind,
  generation: 1,
  at: '2026-04-01T10:00:00.000Z',
  by,
  verified: false,
  reason: `${kind} by ${by}`,
});

describe('rollout records', () => {
  it("a wave gate's lookup keeps a member's own lookup of that gate, and removing the rollout leaves it", async () => {
    const [gate, member, other] = [uniqueName('eu-approval'), uniqueName('eu-1'), uniqueName('eu-2')];
    const spec = (name: string, gates: string[]) =>
      parseDelivery({
        name,
        source,
        cluster: { eks: { name: 'prod', region: 'eu-west-1' } },
        gates: gates.map((name) => ({ name })),
      });
    await putDelivery(db, spec(member, [gate]), new Date());
    await putDelivery(db, spec(other, []), new Date());
    const name = uniqueName('fleet');
    await putRollout(
      db,
      parseRollout({ name, source, waves: [{ deliveries: [member, other], gate }] }),
      new Date(),
    );
    expect((await deliveriesUsingGate(db, gate)).sort()).toEqual([member, other].sort());

    await removeRollout(db, name);
    // The member still names the gate itself: its opening still reconciles it.
    expect(await deliveriesUsingGate(db, gate)).toEqual([member]);
  });

  it('numbers actions: of two writers that read the same state, one records; the sequence orders them whatever their time', async () => {
    const name = uniqueName('fleet');
    expect(await recordRolloutAction(db, name, action('halt', 'alice'), 0)).toBe(true);
    // Both read one action; the resume lands first, the halt decided before it is refused.
    expect(await recordRolloutAction(db, name, action('resume', 'bob'), 1)).toBe(true);
    expect(await recordRolloutAction(db, name, action('halt', 'sluice'), 1)).toBe(false);
    // Appending (a rollback's record) goes after whatever is there.
    await appendRolloutAction(db, name, action('rollback', 'carol'));
    expect(
      (await listRolloutActions(db, name)).map((recorded) => [
        recorded.sequence,
        recorded.action,
        recorded.by,
      ]),
    ).toEqual([
      [1, 'halt', 'alice'],
      [2, 'resume', 'bob'],
      [3, 'rollback', 'carol'],
    ]);
  });
});
