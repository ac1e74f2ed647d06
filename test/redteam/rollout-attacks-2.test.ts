// Red team, rollouts (second round): a pusher and a stale run against the promises of README
// "Rolling out to a fleet" — a rolled-back digest is not rolled out (nor kept) again, a completed
// generation lets members skip the fleet's statuses only for the generation that completed.
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import { reconcile } from '../../functions/core/reconcile/reconcile.ts';
import { applyLocalRolloutAction } from '../../functions/core/reconcile/rollout-actions.ts';
import { getRollout, putRollout, removeRollout } from '../../functions/core/store/rollouts.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { rawRegistry } from '../support/deliveries.ts';
import { fleet } from '../support/rollouts.ts';
import { testbed } from '../support/testbed.ts';

const bed = testbed();
const SOAK = 30 * 60_000;

/** A fleet of two waves of one member each, the first soaking 30 minutes. */
async function twoWaves(supersede?: 'restart') {
  const f = await fleet(bed, { waves: [1, 1], soak: '30m', ...(supersede && { supersede }) });
  const [[first], [second]] = f.waves as [[string], [string]];
  const run = (name: string) => reconcile(name, f.deps);
  /** The first wave takes the revision, and its soak ends. */
  const soakFirst = async () => {
    await run(first);
    f.clock.advance(SOAK + 1_000);
  };
  return { f, first, second, run, soakFirst };
}

describe('a rollback superseded by a push (supersede: restart)', () => {
  it('does not leave later waves re-applying the rolled-back digest', async () => {
    const { f, first, second, run, soakFirst } = await twoWaves('restart');
    // v1 through both waves, then v2 through both waves.
    for (const value of ['v1', 'v2']) {
      if (value !== 'v1') await f.push(value);
      await soakFirst();
      await run(second);
      expect(await f.value(second)).toBe(value);
    }
    // v2 is rolled back; the reconcile function's invocation of the members has not landed yet.
    await applyLocalRolloutAction(
      { rollout: f.name, action: 'rollback', reason: 'INC-9: v2 breaks' },
      'alice',
      {
        ...f.gateDeps,
        reconcileNow: async () => {},
      },
    );
    // The pusher pushes at once; the push's runs come first.
    await f.push('v3');
    await run(first);
    await run(second);
    // The second wave was returned to v1 (or waits at it): it does not keep re-applying v2.
    expect(await f.value(second)).toBe('v1');
    expect((await getStatus(f.deps.db, second))?.lastAppliedRevision).not.toContain(
      (await f.state()).generation?.rejected?.[0] ?? 'sha256:none',
    );
    // The rollback done, the push goes on through the waves.
    await run(first);
    expect(await f.value(first)).toBe('v3');
    expect(await f.value(second)).toBe('v1');
  });
});

describe('a stale run marking a generation completed', () => {
  it('does not mark the generation of a rollout removed and added again meanwhile', async () => {
    const { f, first, second, soakFirst } = await twoWaves();
    await soakFirst();
    // The second member's run finds generation 1 complete; before it records so, the rollout is
    // removed and added again, and a new push starts its generation 1 (wave 1 soaking).
    let interleaved = false;
    const interleave = async () => {
      const rollout = (await getRollout(f.deps.db, f.name))!;
      await removeRollout(f.deps.db, f.name);
      await putRollout(f.deps.db, rollout, f.clock.now());
      await f.push('v2');
      await reconcile(first, f.deps);
      expect(await f.value(first)).toBe('v2');
    };
    const send = (async (command: unknown) => {
      const input = command instanceof UpdateCommand ? command.input : undefined;
      if (!interleaved && input?.UpdateExpression?.includes('completedAt')) {
        interleaved = true;
        await interleave();
      }
      return f.deps.db.doc.send(command as UpdateCommand);
    }) as DynamoDBDocumentClient['send'];
    const stale: ReconcileDeps = {
      ...f.deps,
      db: { ...f.deps.db, doc: { send } as unknown as DynamoDBDocumentClient },
    };
    await reconcile(second, stale);
    expect(interleaved).toBe(true);
    expect(await f.value(second)).toBe('v1');
    // The new generation is in wave 1's soak: the second wave does not take v2 yet.
    expect((await f.state()).generation?.completedAt).toBeUndefined();
    await reconcile(second, f.deps);
    expect(await f.value(second)).toBe('v1');
  });
});

describe('a halted revision superseded by a push, then pushed again', () => {
  it('does not go on through the waves without a resume', async () => {
    const { f, first, second, run, soakFirst } = await twoWaves('restart');
    await soakFirst();
    await run(second);
    const bad = await f.push('v2');
    await run(first);
    expect(await f.value(first)).toBe('v2');
    await applyLocalRolloutAction(
      { rollout: f.name, action: 'halt', reason: 'INC-12: v2 errors' },
      'alice',
      f.gateDeps,
    );
    expect((await f.state()).phase).toBe('Halted');
    // The pusher pushes anything (a halt a person recorded holds it: no generation starts), then
    // tags the halted digest again.
    await f.push('v3');
    await run(second);
    const url = (await getRollout(f.deps.db, f.name))!.source.url;
    const repository = url.slice(`oci://${bed.registry.host}/`.length);
    const registry = rawRegistry(bed);
    const manifest = await registry.getManifest(repository, bad);
    await registry.putManifest(repository, 'main', manifest.body, manifest.mediaType);
    f.clock.advance(SOAK + 1_000);
    await run(second);
    // Nobody resumed v2: the second wave does not take it, and the rollout stays halted on it.
    expect(await f.value(second)).toBe('v1');
    const state = await f.state();
    expect(state.phase).toBe('Halted');
    expect(state.generation?.digest).toBe(bad);
  });
});

describe('a push right after a generation completed (held)', () => {
  it('goes through the waves: the completed record is of the old generation only', async () => {
    const { f, first, second, soakFirst } = await twoWaves();
    await soakFirst();
    await reconcile(second, f.deps);
    expect((await f.state()).generation?.completedAt).toBeDefined();
    await f.push('v2');
    // The later wave's run is the first to see the push: it starts the generation, and waits.
    expect(await reconcile(second, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    await reconcile(first, f.deps);
    expect(await reconcile(second, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect([await f.value(first), await f.value(second)]).toEqual(['v2', 'v1']);
  });
});
