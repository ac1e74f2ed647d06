// `Release Waiting`: the moment a delivery becomes held at a gate, one event per gate, naming the
// revision and how to approve it (runbook, CLI line); nothing more while it stays held. On the real
// components.
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../../functions/core/gates/requests.ts';
import type { ReleaseWaitingEvent } from '../../../functions/core/reconcile/events.ts';
import type { ReconcileEvent } from '../../../functions/core/store/events.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { configMapYaml, inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

// Revisions as people are shown them: the digest first; a tag sluice resolved, or one a requester claimed.
const checked = (revision: string) => `${revision.split('@')[1]} (tag ${revision.split('@')[0]})`;
const claimed = (revision: string) =>
  `${revision.split('@')[1]} (tag "${revision.split('@')[0]}" claimed, not checked against the registry)`;

const bed = testbed();

async function scenario(blocks: 'all' | 'revisions') {
  const clock = manualClock('2026-06-01T09:00:00Z');
  const waiting: ReleaseWaitingEvent[] = [];
  const published: ReconcileEvent[] = [];
  const gate = uniqueName('release');
  const deps = {
    ...engineDeps(),
    clock,
    events: {
      publish: async (event: ReconcileEvent) => void published.push(event),
      releaseWaiting: async (event: ReleaseWaitingEvent) => void waiting.push(event),
    },
    gateRunbooks: new Map([[gate, 'sluice-release-0123456789']]),
    gateFunction: 'Sluice-GateFunction-AbC',
  };
  const delivery = uniqueName('waiting');
  const ns = uniqueName('waiting');
  const repository = uniqueName('waiting/app');
  await createNamespace(bed.kubeConfig(), ns);
  await registerGate(deps, { name: gate, default: 'closed', window: '1h', approval: 'revision' });
  await registerDelivery(deps, bed, {
    name: delivery,
    repository,
    tag: 'release',
    gates: [{ name: gate, blocks }],
  });
  const gateDeps = inProcessGateDeps(deps);
  return {
    clock,
    deps,
    gate,
    delivery,
    waiting,
    published,
    push: async (value: string) =>
      `release@${await pushFiles(bed, repository, 'release', { 'cm.yaml': configMapYaml('app', ns, value) })}`,
    gateRequest: (action: 'open' | 'close', revision?: string) =>
      handleGateEvent(
        parseGateEvent({
          gate,
          action,
          requestedBy: 'alice',
          source: 'cli',
          reason: 'CHG-9',
          ...(revision && { revision }),
        }),
        gateDeps,
      ),
  };
}

describe('Release Waiting', () => {
  it('is published once when a revision becomes held at a closed gate, naming the runbook and the CLI line', async () => {
    const { clock, deps, gate, delivery, waiting, published, push } = await scenario('all');
    const v1 = await push('1.0.0');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v1 });
    expect(waiting).toEqual([
      {
        delivery,
        revision: v1,
        gate,
        blocks: 'all',
        approve: {
          runbook: 'sluice-release-0123456789',
          cli: `sluice gate open ${gate} --revision ${v1} --function Sluice-GateFunction-AbC`,
        },
        message: expect.stringContaining(
          `delivery '${delivery}': waiting for gate '${gate}' (closed; approve this revision with: sluice gate open ${gate} --revision ${v1})`,
        ),
        time: clock.now().toISOString(),
      },
    ]);
    expect(published.at(-1)).toMatchObject({ outcome: 'Blocked' });

    // Still held, same revision: the interval runs say nothing new.
    clock.advance(5 * 60_000);
    expect((await run(delivery, deps)).outcome).toBe('Blocked');
    clock.advance(5 * 60_000);
    expect((await run(delivery, deps)).outcome).toBe('Blocked');
    expect(waiting).toHaveLength(1);

    // A newer revision held at the same gate is a new release waiting.
    const v2 = await push('2.0.0');
    clock.advance(60_000);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v2 });
    expect(waiting.map((e) => e.revision)).toEqual([v1, v2]);
  });

  it('is published again after the release went out and the next one is held; not for the approved one', async () => {
    const { clock, deps, gate, delivery, waiting, push, gateRequest } = await scenario('all');
    const v1 = await push('1.0.0');
    await run(delivery, deps);
    expect(waiting).toHaveLength(1);

    clock.advance(60_000);
    await gateRequest('open', v1);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v1 });
    expect(waiting).toHaveLength(1);

    // The approval was for v1: v2 waits at the gate, open only for v1.
    const v2 = await push('2.0.0');
    clock.advance(60_000);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v2 });
    expect(waiting.at(-1)).toMatchObject({
      revision: v2,
      gate,
      approve: { cli: `sluice gate open ${gate} --revision ${v2} --function Sluice-GateFunction-AbC` },
      message: expect.stringContaining(
        `${checked(v2)} awaits approval at gate '${gate}' (open only for ${claimed(v1)}`,
      ),
    });
    expect(waiting).toHaveLength(2);
  });

  it('under a freeze (blocks: revisions) names the held revision while the applied one is re-applied', async () => {
    const { clock, deps, gate, delivery, waiting, push, gateRequest } = await scenario('revisions');
    const v1 = await push('1.0.0');
    await gateRequest('open', v1);
    expect((await run(delivery, deps)).outcome).toBe('Succeeded');
    expect(waiting).toEqual([]);

    clock.advance(2 * 3_600_000); // the window is over: closed again
    const v2 = await push('2.0.0');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v2 });
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v2 });
    expect(waiting).toEqual([expect.objectContaining({ delivery, gate, revision: v2, blocks: 'revisions' })]);
  });
});
