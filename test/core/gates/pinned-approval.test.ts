// Approvals that name what they approve, on the real components: an open request pinned to a
// revision lets that digest through and holds every other, whichever tag it comes under.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { GateEventError, parseGateEvent } from '../../../functions/core/gates/event.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { listGateAudit } from '../../../functions/core/store/gates.ts';
import { run } from '../../support/deliveries.ts';
import { configMapValue, inProcessGateDeps, gatedDelivery } from '../../support/gates.ts';
import { testbed } from '../../support/testbed.ts';

// Revisions as people are shown them: the digest first; a tag sluice resolved, or one a requester claimed.
const checked = (revision: string) => `${revision.split('@')[1]} (tag ${revision.split('@')[0]})`;
const claimed = (revision: string) =>
  `${revision.split('@')[1]} (tag "${revision.split('@')[0]}" claimed, not checked against the registry)`;

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);

const valueIn = (ns: string) => configMapValue(core, 'app', ns);

async function approvalGate(blocks: 'all' | 'revisions', gateSpec: Record<string, unknown> = {}) {
  const { clock, deps, gate, delivery, ns, pushValue } = await gatedDelivery(bed, {
    start: '2026-06-01T09:00:00Z',
    gate: { default: 'closed', window: '1h', ...gateSpec },
    blocks,
    delivery: { tag: 'release' },
    names: { gate: 'sre', delivery: 'pinned', repository: 'pinned/app' },
  });
  const gateDeps = inProcessGateDeps(deps);
  return {
    clock,
    deps,
    gate,
    delivery,
    ns,
    gateDeps,
    /** Pushes `value` under the `release` tag; returns the revision sluice reports for it. */
    push: pushValue,
    approve: (revision?: string, by = 'alice') =>
      handleGateEvent(
        parseGateEvent({
          gate,
          action: 'open',
          requestedBy: by,
          source: 'cli',
          reason: 'CHG-7',
          ...(revision && { revision }),
        }),
        gateDeps,
      ),
  };
}

describe('an approval pinned to a revision', () => {
  it('opens the gate for that digest only: the next revision stays held, and status says who approved what', async () => {
    const { clock, deps, gate, delivery, ns, push, approve } = await approvalGate('all');
    const v1 = await push('1.2.0');
    const first = await run(delivery, deps);
    expect(first).toMatchObject({ outcome: 'Blocked', revision: v1 });

    const opened = await approve(v1);
    expect(opened).toMatchObject({ outcome: 'accepted', reconciling: [delivery] });
    expect(opened.status).toMatchObject({ state: 'open', revision: v1 });
    expect(opened.message).toContain(`gate '${gate}' is open for ${claimed(v1)} only until`);
    expect(await valueIn(ns)).toBe('1.2.0');

    // Pushed five minutes after the approval, under the same tag: not what was approved.
    clock.advance(5 * 60_000);
    const v2 = await push('1.3.0');
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed', revision: v2 });
    expect(held.message).toBe(
      `${checked(v2)} awaits approval at gate '${gate}' (open only for ${claimed(v1)}, approved by alice (unverified)); approve it with: sluice gate open ${gate} --revision ${v2}`,
    );
    expect(await valueIn(ns)).toBe('1.2.0');
    expect(await getStatus(deps.db, delivery)).toMatchObject({
      pendingRevision: v2,
      lastAppliedRevision: v1,
      blockedBy: [{ name: gate, openFor: { revision: v1 } }],
    });

    const second = await approve(v2, 'bob');
    expect(second.reconciling).toEqual([delivery]);
    expect(await valueIn(ns)).toBe('1.3.0');
    expect((await listGateAudit(deps.db, gate)).map((r) => [r.requestedBy, r.revision, r.outcome])).toEqual([
      ['bob', v2, 'accepted'],
      ['alice', v1, 'accepted'],
    ]);
  });

  it('with blocks: revisions the approved revision is still re-applied (drift corrected) while the new one waits', async () => {
    const { deps, delivery, ns, push, approve } = await approvalGate('revisions');
    const v1 = await push('1.2.0');
    await approve(v1);
    expect(await valueIn(ns)).toBe('1.2.0');
    await core.deleteNamespacedConfigMap({ name: 'app', namespace: ns });
    const v2 = await push('1.3.0');
    const run2 = await run(delivery, deps);
    expect(run2).toMatchObject({ outcome: 'Blocked', revision: v2 });
    expect(run2.message).toMatch(
      new RegExp(`^re-applied ${v1} \\(drift corrected\\); revision ${v2} is held: `),
    );
    expect(await valueIn(ns)).toBe('1.2.0');
  });

  it('a gate with approval: revision refuses an open request that names none, listing what awaits approval', async () => {
    const { deps, gate, delivery, push, approve } = await approvalGate('all', { approval: 'revision' });
    const v1 = await push('1.2.0');
    const held = await run(delivery, deps);
    expect(held.message).toBe(
      `waiting for gate '${gate}' (closed; approve this revision with: sluice gate open ${gate} --revision ${v1})`,
    );
    const refused = approve(undefined);
    await expect(refused).rejects.toThrow(GateEventError);
    await expect(approve(undefined)).rejects.toThrow(
      `gate '${gate}' opens for one revision at a time (approval: revision): name it with --revision <tag>@sha256:<hex> (event field "revision"); awaiting approval: ${delivery}: ${v1}`,
    );
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
    expect((await gateStatus(gate, { db: deps.db, clock: deps.clock })).status.state).toBe('closed');
  });

  it('the approval is of the digest: a tag moved to other content after the approval is held', async () => {
    const { deps, delivery, ns, push, approve } = await approvalGate('all');
    const approved = await push('reviewed');
    await approve(approved);
    expect(await valueIn(ns)).toBe('reviewed');
    const swapped = await push('swapped');
    expect(swapped.split('@')[0]).toBe(approved.split('@')[0]); // same tag, other digest
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: swapped });
    expect(await valueIn(ns)).toBe('reviewed');
  });
});
