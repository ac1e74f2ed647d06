// `Release Waiting`: the moment a delivery (or a rollout's wave) becomes held at a gate, one event
// per cause, saying why, until when and what can lift it (approve only what an approval lifts);
// nothing more while it stays held, however many revisions a freeze holds. On the real components
// (kube-apiserver, registry, DynamoDB Local, the CloudWatch stand-in).
import { describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../../functions/core/gates/requests.ts';
import type { ReleaseWaitingEvent } from '../../../functions/core/reconcile/events.ts';
import type { ReconcileEvent } from '../../../functions/core/store/events.ts';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import { revisionFields } from '../../../functions/reconcile/handler.ts';
import { createAlarm } from '../../support/alarms.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { configMapYaml, inProcessGateDeps, manualClock, registerGate } from '../../support/gates.ts';
import { fleet } from '../../support/rollouts.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

// Revisions as people are shown them: the digest first; a tag sluice resolved, or one a requester claimed.
const checked = (revision: string) => `${revision.split('@')[1]} (tag ${revision.split('@')[0]})`;
const claimed = (revision: string) =>
  `${revision.split('@')[1]} (tag "${revision.split('@')[0]}" claimed, not checked against the registry)`;

const bed = testbed();

async function scenario(blocks: 'all' | 'revisions', gateSpec: Record<string, unknown> = {}) {
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
  await registerGate(deps, {
    name: gate,
    default: 'closed',
    window: '1h',
    approval: 'revision',
    ...gateSpec,
  });
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
        cause: 'approval',
        lift: 'approve',
        why: `gate '${gate}' is closed`,
        todo: `Approve this revision in the console (Systems Manager, Automation, runbook sluice-release-0123456789) or with: sluice gate open ${gate} --revision ${v1} --reason <why> --function Sluice-GateFunction-AbC`,
        approve: {
          runbook: 'sluice-release-0123456789',
          cli: `sluice gate open ${gate} --revision ${v1} --function Sluice-GateFunction-AbC`,
        },
        message: `sluice: delivery '${delivery}' (revision ${checked(v1)}) waits at gate '${gate}': gate '${gate}' is closed. Approve this revision in the console (Systems Manager, Automation, runbook sluice-release-0123456789) or with: sluice gate open ${gate} --revision ${v1} --reason <why> --function Sluice-GateFunction-AbC`,
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
      lift: 'approve',
      why: expect.stringContaining(`gate '${gate}' is open only for ${claimed(v1)}`),
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
    // What runs and what waits, apart (the dashboard's columns).
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', appliedRevision: v1, heldRevision: v2 });
    expect(revisionFields(held)).toEqual({ appliedRevision: v1, heldRevision: v2 });
    expect(waiting).toEqual([expect.objectContaining({ delivery, gate, revision: v2, blocks: 'revisions' })]);
  });

  it('a freeze: says why and until when, offers no approval, and is told once for the window however many revisions it holds', async () => {
    const { clock, deps, gate, delivery, waiting, push } = await scenario('all', {
      default: 'open',
      approval: 'any',
      freezes: [{ from: '2026-05-31', to: '2026-06-09', timeZone: 'UTC', reason: 'audit' }],
    });
    const v1 = await push('1.0.0');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v1 });
    expect(waiting).toHaveLength(1);
    const [notice] = waiting;
    expect(notice).toMatchObject({ gate, cause: 'freeze', lift: 'wait', until: expect.any(String) });
    expect(notice!.approve).toBeUndefined();
    expect(notice!.message).toContain(`gate '${gate}' is closed by freeze`);
    expect(notice!.message).toContain(
      `No approval opens it: it goes out by itself when the freeze ends at ${notice!.until!.replace(/\.\d{3}Z$/, 'Z')}`,
    );
    expect(notice!.message).not.toMatch(/\bapprove\b|sluice gate open/i);

    // A new revision every day of the freeze: the approvers are not told again.
    for (const [day, value] of ['2.0.0', '3.0.0', '4.0.0'].entries()) {
      clock.advance(24 * 3_600_000);
      const next = await push(value);
      expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: next });
      expect(waiting, `day ${day + 2}`).toHaveLength(1);
    }
  });

  it('an alarm: names the alarm to fix, offers no approval, and is told once while it holds, whatever the revision', async () => {
    const alarm = await createAlarm('ALARM');
    const { clock, deps, gate, delivery, waiting, push, gateRequest } = await scenario('all', {
      default: 'open',
      approval: 'any',
      alarms: [alarm],
    });
    const v1 = await push('1.0.0');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v1 });
    expect(waiting).toEqual([
      expect.objectContaining({ gate, cause: 'alarm', lift: 'fix-alarm', revision: v1 }),
    ]);
    expect(waiting[0]!.approve).toBeUndefined();
    expect(waiting[0]!.message).toContain(`No approval opens it: fix what alarm '${alarm}' reports`);
    expect(waiting[0]!.message).not.toMatch(/\bapprove\b|sluice gate open/i);
    // An open request does not lift it, and a new revision is not a new notice.
    await gateRequest('open');
    clock.advance(60_000);
    const v2 = await push('2.0.0');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', revision: v2 });
    expect(waiting).toHaveLength(1);
  });
});

describe('Release Waiting at a wave gate', () => {
  it("tells the wave gate's approvers once for the wave, with why and how to approve; the status reads plainly", async () => {
    const gate = uniqueName('release-approval');
    const waiting: ReleaseWaitingEvent[] = [];
    const f = await fleet(bed, {
      waves: [1, 2],
      waveGate: { wave: 1, gate },
      start: new Date().toISOString(),
      deps: {
        events: {
          publish: async () => {},
          releaseWaiting: async (event) => void waiting.push(event),
        },
        gateRunbooks: new Map([[gate, 'sluice-release-approval-0123']]),
      },
    });
    await registerGate(f.deps, { name: gate, default: 'closed', approval: 'revision' });
    const [[canary], [eu, us]] = f.waves as [[string], [string, string]];
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    const revision = (await f.state()).generation!.revision;
    const held = await reconcile(eu, f.deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'RolloutWaiting' });
    expect(held.message).toContain(`wave 2 of 2 waits for gate '${gate}' to open`);
    expect(held.message).not.toContain('holds wave');
    expect(await reconcile(us, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(await reconcile(eu, f.deps)).toMatchObject({ reason: 'RolloutWaiting' });
    expect(waiting).toEqual([
      expect.objectContaining({
        delivery: eu,
        rollout: f.name,
        wave: 2,
        deliveries: [eu, us],
        gate,
        revision,
        cause: 'approval',
        lift: 'approve',
        approve: expect.objectContaining({ runbook: 'sluice-release-approval-0123' }),
      }),
    ]);
    expect(waiting[0]!.message).toContain(
      `sluice: rollout '${f.name}' wave 2 (${eu}, ${us}) (revision ${checked(revision)}) waits at gate '${gate}'`,
    );
    expect(waiting[0]!.message).toContain(`sluice gate open ${gate} --revision ${revision} --reason <why>`);
  });
});
