// The wave tallies of a rollout's generation (rollout/tally.ts), under the rollout's partition:
// `tally#<generation>#<startedAt>#<wave>` (counts, the latest readySince, a `fail:<member>` and
// `alarm:<member>` attribute per failure and alarm hold, `seq`: one more per change) and the wave's
// wake-up cursor `wake#…` (how many of its members, in order, a run has woken). A member's change
// goes in the transaction of its status (store/run-end.ts), its maxParallel place in one of its
// own (claimPlace); the repair derives a tally again from the statuses, written only if no change
// came in between (its `seq`).
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RolloutMark, TallyChange, TallyNote, WaveTally } from '../model/rollout.ts';
import { isTransactionConflict } from './gates.ts';
import { fenceCondition, LeaseLostError, type Fence, type TransactItem } from './lease.ts';
import { rolloutKey } from './rollouts.ts';
import { deliveryKey, queryPartition, type TableClient } from './table-client.ts';

/** Names one generation of a rollout (its number and start). */
export type GenerationKey = Pick<RolloutMark, 'rollout' | 'generation' | 'startedAt'>;

const prefix = (g: GenerationKey) => `tally#${g.generation}#${g.startedAt}#`;
const tallyKey = (g: GenerationKey, wave: number) => ({
  pk: rolloutKey(g.rollout),
  sk: `${prefix(g)}${String(wave).padStart(4, '0')}`,
});
const wakeKey = (g: GenerationKey, wave: number) => ({
  pk: rolloutKey(g.rollout),
  sk: `wake#${g.generation}#${g.startedAt}#${String(wave).padStart(4, '0')}`,
});

const FAIL = 'fail:';
const ALARM = 'alarm:';

/** A wave's tally as stored, with what the repair needs. */
export interface StoredTally {
  readonly tally: WaveTally;
  /** One more for each change written (the repair writes only if it is still what it read). */
  readonly seq: number;
  /** When the repair last derived it (absent: never; the changes alone made it). */
  readonly derivedAt?: string;
}

function tallyFromItem(item: Record<string, unknown>): StoredTally {
  const notes = (start: string) =>
    Object.fromEntries(
      Object.entries(item)
        .filter(([key]) => key.startsWith(start))
        .map(([key, note]) => [key.slice(start.length), note as TallyNote]),
    );
  const n = (key: string) => (item[key] as number | undefined) ?? 0;
  return {
    tally: {
      done: n('done'),
      started: n('started'),
      applied: n('applied'),
      open: n('open'),
      ...(typeof item.lastReady === 'string' && { lastReady: item.lastReady }),
      failures: notes(FAIL),
      alarms: notes(ALARM),
    },
    seq: n('seq'),
    ...(typeof item.derivedAt === 'string' && { derivedAt: item.derivedAt }),
  };
}

/** The generation's tallies by wave (0-based; absent: no change yet, the empty tally). One Query. */
export async function readTallies(db: TableClient, g: GenerationKey): Promise<Map<number, StoredTally>> {
  const items = await queryPartition(db, rolloutKey(g.rollout), { skPrefix: prefix(g), consistent: true });
  return new Map(
    items.map((item) => [Number((item.sk as string).slice(prefix(g).length)), tallyFromItem(item)]),
  );
}

/**
 * How a tally's lastReady is kept at the latest readySince: `raise` sets it, if it is earlier
 * (or absent); `keep` leaves it, if it is not earlier. DynamoDB has no max(): the writer tries
 * one, and on its condition failing, the other.
 */
export type LastReadyWay = 'raise' | 'keep';

/** The Update that applies `change` by `member` to its wave's tally (creating it if absent). */
export function tallyUpdate(
  db: TableClient,
  g: GenerationKey,
  wave: number,
  member: string,
  change: TallyChange,
  options: { readonly lastReady?: LastReadyWay; readonly openBelow?: number } = {},
): NonNullable<TransactItem['Update']> {
  const names: Record<string, string> = { '#seq': 'seq' };
  const values: Record<string, unknown> = { ':one': 1 };
  const add = ['#seq :one'];
  for (const field of ['done', 'started', 'applied', 'open'] as const)
    if (change[field] !== 0) {
      names[`#${field}`] = field;
      values[`:${field}`] = change[field];
      add.push(`#${field} :${field}`);
    }
  const set: string[] = [];
  const remove: string[] = [];
  const note = (key: string, attribute: string, value: TallyNote | null | undefined) => {
    if (value === undefined) return;
    names[key] = attribute;
    if (value === null) remove.push(key);
    else {
      values[`:${key.slice(1)}`] = value;
      set.push(`${key} = :${key.slice(1)}`);
    }
  };
  note('#fail', `${FAIL}${member}`, change.failure);
  note('#alarm', `${ALARM}${member}`, change.alarm);
  const conditions: string[] = [];
  if (change.readySince !== undefined) {
    names['#lr'] = 'lastReady';
    values[':ready'] = change.readySince;
    if ((options.lastReady ?? 'raise') === 'raise') {
      set.push('#lr = :ready');
      conditions.push('(attribute_not_exists(#lr) OR #lr < :ready)');
    } else conditions.push('#lr >= :ready');
  }
  if (options.openBelow !== undefined) {
    names['#open'] = 'open';
    values[':max'] = options.openBelow;
    conditions.push('(attribute_not_exists(#open) OR #open < :max)');
  }
  return {
    TableName: db.table,
    Key: tallyKey(g, wave),
    UpdateExpression: [
      `ADD ${add.join(', ')}`,
      set.length > 0 && `SET ${set.join(', ')}`,
      remove.length > 0 && `REMOVE ${remove.join(', ')}`,
    ]
      .filter(Boolean)
      .join(' '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ...(conditions.length > 0 && { ConditionExpression: conditions.join(' AND ') }),
  };
}

const conflictPause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(1000, 10 * 2 ** attempt) * (0.5 + Math.random())));

/**
 * Takes one of the wave's `maxParallel` places for `member` (its run holds the lease `fence`): its
 * status gets the mark `mark` (claimed) and the tally the change that makes, in one transaction,
 * only while fewer than `maxParallel` places are taken. False: none was free.
 */
export async function claimPlace(
  db: TableClient,
  fence: Fence,
  mark: RolloutMark,
  change: TallyChange | undefined,
  maxParallel: number,
): Promise<boolean> {
  const status: NonNullable<TransactItem['Update']> = {
    TableName: db.table,
    Key: { pk: deliveryKey(fence.delivery), sk: 'status' },
    UpdateExpression: 'SET #mark = :mark',
    ...fenceCondition(fence),
    ExpressionAttributeNames: { '#mark': 'rolloutMark' },
    ExpressionAttributeValues: { ...fenceCondition(fence).ExpressionAttributeValues, ':mark': mark },
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const tally = tallyUpdate(db, mark, mark.wave, fence.delivery, change ?? NO_CHANGE, {
        openBelow: maxParallel,
      });
      await db.doc.send(new TransactWriteCommand({ TransactItems: [{ Update: status }, { Update: tally }] }));
      return true;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const [own, place] = error.CancellationReasons ?? [];
      if (own?.Code === 'ConditionalCheckFailed') throw new LeaseLostError(fence.delivery);
      if (place?.Code === 'ConditionalCheckFailed') return false;
      if (!isTransactionConflict(error) || attempt >= 8) throw error;
      await conflictPause(attempt);
    }
  }
}

const NO_CHANGE: TallyChange = { done: 0, started: 0, applied: 0, open: 0 };

/**
 * Moves the wave's wake-up cursor to `upTo` (never back): the members from where it stood to
 * `upTo`, in the wave's order, are this caller's to wake; none when another run moved it first.
 */
export async function advanceWake(
  db: TableClient,
  g: GenerationKey,
  wave: number,
  upTo: number,
): Promise<{ readonly from: number; readonly to: number } | undefined> {
  try {
    const { Attributes } = await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: wakeKey(g, wave),
        UpdateExpression: 'SET #upTo = :upTo',
        ConditionExpression: 'attribute_not_exists(#upTo) OR #upTo < :upTo',
        ExpressionAttributeNames: { '#upTo': 'upTo' },
        ExpressionAttributeValues: { ':upTo': upTo },
        ReturnValues: 'UPDATED_OLD',
        ReturnValuesOnConditionCheckFailure: 'NONE',
      }),
    );
    return { from: (Attributes?.upTo as number | undefined) ?? 0, to: upTo };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Writes a tally the repair derived from the statuses, if no change came in since it read the
 * stored one (`seen`: its seq; undefined: there was none): false when one did (derive again).
 */
export async function putDerivedTally(
  db: TableClient,
  g: GenerationKey,
  wave: number,
  tally: WaveTally,
  seen: number | undefined,
  now: Date,
): Promise<boolean> {
  const notes = (start: string, from: Readonly<Record<string, TallyNote>>) =>
    Object.fromEntries(Object.entries(from).map(([name, note]) => [`${start}${name}`, note]));
  try {
    await db.doc.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          ...tallyKey(g, wave),
          done: tally.done,
          started: tally.started,
          applied: tally.applied,
          open: tally.open,
          ...(tally.lastReady !== undefined && { lastReady: tally.lastReady }),
          ...notes(FAIL, tally.failures),
          ...notes(ALARM, tally.alarms),
          seq: (seen ?? 0) + 1,
          derivedAt: now.toISOString(),
        },
        ...(seen !== undefined
          ? {
              ConditionExpression: '#seq = :seq',
              ExpressionAttributeNames: { '#seq': 'seq' },
              ExpressionAttributeValues: { ':seq': seen },
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
