// What a rollout remembers, on the real components (kube-apiserver, registry, DynamoDB Local):
// halts and resumes in the order they were recorded even within one millisecond, the revision a
// rollback returns to after a rollback that did not finish, the digests rolled back after the
// rollout was removed and added again, and a halt announced on the bus when it is asked for.
import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../../functions/core/reconcile/events.ts';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import {
  applyLocalRolloutAction,
  type RolloutActionDeps,
} from '../../../functions/core/reconcile/rollout-actions.ts';
import {
  getGeneration,
  getRollout,
  putRollout,
  removeRollout,
} from '../../../functions/core/store/rollouts.ts';
import { countedTableOf } from '../../support/counted-table.ts';
import { fleet } from '../../support/rollouts.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const MINUTE = 60_000;

/** A person's action as `sluice rollout … --by` records it locally. */
const local = (
  f: { name: string; gateDeps: RolloutActionDeps },
  action: 'halt' | 'resume' | 'rollback',
  by: string,
  deps: RolloutActionDeps = f.gateDeps,
) => applyLocalRolloutAction({ rollout: f.name, action, reason: `${action} by ${by}` }, by, deps);

describe('rollout history', () => {
  it('a halt, a resume and a halt within one millisecond leave the rollout halted: the order recorded, not the clock, counts', async () => {
    const f = await fleet(bed, { waves: [1, 1], soak: '30m' });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    f.clock.advance(30 * MINUTE);
    await reconcile(rest, f.deps);
    await f.push('v2');
    // A member's run names its rollout: the dashboard finds the members by it in the log lines.
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded', rollout: f.name });

    // The manual clock stands still: all three carry the same time.
    await local(f, 'halt', 'alice');
    await local(f, 'resume', 'bob');
    await local(f, 'halt', 'carol');
    expect(await f.state()).toMatchObject({ phase: 'Halted', halt: { by: 'carol', recorded: true } });
    expect(await reconcile(rest, f.deps)).toMatchObject({ reason: 'RolloutHalted' });
    await local(f, 'resume', 'dave');
    expect((await f.state()).phase).toBe('Progressing');
  });

  it('a rollout after a rollback that was halted (by a person) and resumed can still be rolled back to the last revision the fleet completed', async () => {
    const f = await fleet(bed, { waves: [1, 1], supersede: 'restart', start: new Date().toISOString() });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    const v1 = (await getGeneration(f.deps.db, f.name))!;
    expect((await f.state()).phase).toBe('Complete');
    f.loseEvents();
    await f.push('v2');
    await reconcile(canary, f.deps);
    // Rolled back, but no member is reconciled yet: the rollback has not finished.
    await local(f, 'rollback', 'alice', { ...f.gateDeps, reconcileNow: undefined });
    expect(await getGeneration(f.deps.db, f.name)).toMatchObject({
      kind: 'rollback',
      digest: v1.digest,
      previous: { digest: v1.digest },
    });
    expect((await f.state()).phase).toBe('Progressing');
    // A push does not restart over a rollback under way, nor over a halt a person recorded: v3
    // waits for the resume, and then for the rollback to finish.
    await local(f, 'halt', 'carol', { ...f.gateDeps, reconcileNow: undefined });
    await f.push('v3');
    await reconcile(rest, f.deps);
    expect(await getGeneration(f.deps.db, f.name)).toMatchObject({ kind: 'rollback' });
    await local(f, 'resume', 'carol', { ...f.gateDeps, reconcileNow: undefined });
    for (const member of [canary, rest, canary]) await reconcile(member, f.deps);
    const v3 = (await getGeneration(f.deps.db, f.name))!;
    expect(v3).toMatchObject({ kind: 'rollout', previous: { digest: v1.digest, revision: v1.revision } });
    const rolledBack = await local(f, 'rollback', 'bob');
    expect(rolledBack.state.generation).toMatchObject({ kind: 'rollback', digest: v1.digest });
    expect(rolledBack.state.generation!.rejected).toHaveLength(2);
    expect(await f.value(canary)).toBe('v1');
    expect(await f.value(rest)).toBe('v1');
  });

  it('a rollout removed and added again does not roll out a digest it rolled back; a newer push goes out', async () => {
    const f = await fleet(bed, { waves: [1, 1], start: new Date().toISOString() });
    const [[canary]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    f.loseEvents();
    await f.push('v2');
    await reconcile(canary, f.deps);
    const v2 = (await getGeneration(f.deps.db, f.name))!;
    await local(f, 'rollback', 'alice');
    expect(await f.value(canary)).toBe('v1');

    const rollout = (await getRollout(f.deps.db, f.name))!;
    await removeRollout(f.deps.db, f.name);
    await putRollout(f.deps.db, rollout, f.clock.now());
    expect(await reconcile(canary, f.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutHalted',
      message: expect.stringContaining(`${v2.revision} was rolled back before: it is not rolled out again`),
    });
    expect(await f.value(canary)).toBe('v1');
    expect(await getGeneration(f.deps.db, f.name)).toBeUndefined();

    await f.push('v3');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await f.value(canary)).toBe('v3');
    expect(await getGeneration(f.deps.db, f.name)).toMatchObject({ generation: 1, rejected: [v2.digest] });
  });

  it('a halt asked for through the rollouts entry is on the bus at once, before any member runs', async () => {
    const published: { type: string; event: RolloutEvent }[] = [];
    const f = await fleet(bed, {
      waves: [1, 1],
      start: new Date().toISOString(),
      deps: {
        events: {
          publish: async () => {},
          rollout: async (type, event) => void published.push({ type, event }),
        },
      },
    });
    const [[canary]] = f.waves as [[string], [string]];
    await reconcile(canary, f.deps);
    f.loseEvents();
    await f.push('v2');
    await reconcile(canary, f.deps);
    const before = published.length;
    await f.act('halt', 'INC-12: checkout errors');
    expect(published.slice(before)).toMatchObject([
      {
        type: 'Rollout Halted',
        event: {
          rollout: f.name,
          generation: 2,
          why: 'INC-12: checkout errors',
          by: expect.stringContaining('alice'),
        },
      },
    ]);
  });
});

describe('a rollout at scale', () => {
  it("once a generation completed, a member's run reads its record, not the fleet's statuses", async () => {
    const counted = countedTableOf(bed);
    const f = await fleet(bed, { waves: [1, 2], deps: { db: counted.db } });
    const [[canary], [eu1]] = f.waves as [[string], [string, string]];
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await getGeneration(f.deps.db, f.name)).toMatchObject({ completedAt: expect.any(String) });

    counted.sent.length = 0;
    expect(await reconcile(eu1, f.deps)).toMatchObject({ outcome: 'Succeeded', rollout: f.name });
    expect(counted.sent).not.toContain('BatchGetItem');
  });

  it('the run that makes a wave Ready arranges the next wave’s start at the soak’s end, once, even if none of its members runs meanwhile', async () => {
    const wakes: { delivery: string; at: string }[] = [];
    const f = await fleet(bed, {
      waves: [1, 3],
      soak: '30m',
      maxParallel: 2,
      deps: {
        retryTimer: {
          retryAt: async (delivery, at) => {
            wakes.push({ delivery, at: at.toISOString() });
            return at;
          },
        },
      },
    });
    const [[canary], [first, second]] = f.waves as [[string], [string, string, string]];
    f.loseEvents();
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(wakes).toEqual([
      { delivery: first, at: '2026-04-01T10:30:00.000Z' },
      { delivery: second, at: '2026-04-01T10:30:00.000Z' },
    ]);
    // Its next runs during the soak arrange nothing more.
    f.clock.advance(5 * MINUTE);
    await reconcile(canary, f.deps);
    expect(wakes).toHaveLength(2);
  });
});
