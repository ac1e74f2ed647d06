// A delivery's rollback on the real components (DynamoDB Local, kube-apiserver, the registry, the
// STS stand-in that checks SigV4): a verified, granted principal takes a frozen delivery back to
// a revision it applied before, by digest, through the gates that do not hold rollback; the new
// revision stays held, drift is still corrected, and the rollback is announced and audited.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { TEST_IDENTITIES } from '../../../dev/sigv4-identity.ts';
import { listAppliedRevisions } from '../../../functions/core/store/applied-revisions.ts';
import { listEvents } from '../../../functions/core/store/events.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { BREAK_GLASS } from '../../support/break-glass.ts';
import { run } from '../../support/deliveries.ts';
import { fleet } from '../../support/rollouts.ts';
import { gatedDelivery, inProcessGateDeps, registerGate, signersGranting } from '../../support/gates.ts';
import { ROLLBACKS_ENTRY, signedRollback } from '../../support/rollback.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const { alice, bob } = TEST_IDENTITIES;
const ALICE = 'alice@example.com (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)';
const digestOf = (revision: string) => revision.slice(revision.indexOf('sha256:'));

/**
 * A delivery behind one gate (open at first, `blocks: revisions`), that applied v1 and then v2,
 * and a gate function on the same table whose catch-ups reconcile in this process.
 */
async function appliedTwice(gateSpec: Record<string, unknown> = {}) {
  const gated = await gatedDelivery(bed, {
    start: new Date().toISOString(),
    gate: { default: 'open', ...gateSpec },
    blocks: 'revisions',
    delivery: { tag: 'release' },
    names: { gate: 'friday', delivery: 'back', repository: 'back/app' },
  });
  const { deps, delivery, pushValue } = gated;
  const v1 = await pushValue('v1');
  expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v1 });
  gated.clock.advance(60_000);
  const v2 = await pushValue('v2');
  expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v2 });
  const published: { detailType: string; detail: unknown }[] = [];
  const gateDeps = {
    ...inProcessGateDeps(deps),
    publish: async (detailType: string, detail: unknown) => void published.push({ detailType, detail }),
  };
  const handler = gateHandler(() => gateDeps);
  /** Closes the gate (No-Deploy-Friday): its default becomes closed, with the spec's other fields. */
  const close = () => registerGate(deps, { name: gated.gate, ...gateSpec, default: 'closed' });
  const open = () => registerGate(deps, { name: gated.gate, ...gateSpec, default: 'open' });
  return { ...gated, v1, v2, gateDeps, handler, published, close, open };
}

describe('sluice rollback through a freeze', () => {
  it('takes a frozen delivery back to its previous digest while the new revision stays held, drift still corrected, then goes forward when the gate opens', async () => {
    const {
      deps,
      delivery,
      gate,
      v1,
      v2,
      pushValue,
      applied,
      handler,
      gateDeps,
      published,
      close,
      open,
      ns,
    } = await appliedTwice();
    await close();
    const v3 = await pushValue('v3');
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Blocked', heldRevision: v3 });
    expect(await applied()).toBe('v2');

    deps.clock.advance(30_000);
    const made = await signedRollback(handler, { delivery, reason: 'INC-77: 5xx since v2' });
    expect(made).toMatchObject({
      outcome: 'accepted',
      reconciling: [delivery],
      request: {
        from: v2,
        to: v1,
        held: v3,
        by: alice.arn,
        reason: 'INC-77: 5xx since v2',
        source: 'invoke',
      },
    });
    expect(made.request.through).toEqual([gate]);
    expect(made.message).toContain(
      `delivery '${delivery}': rollback from ${digestOf(v2)} (tag release) to ${digestOf(v1)} (tag release) by ${ALICE}: INC-77: 5xx since v2`,
    );
    expect(made.message).toContain(`through closed gate '${gate}' (it does not hold rollback)`);
    // The catch-up applied v1, pulled by its digest, through the closed gate.
    expect(gateDeps.reconciled.at(-1)).toMatchObject({ outcome: 'Succeeded', revision: v1 });
    expect(await applied()).toBe('v1');
    // Announced like an override: the event names who (as STS verified), what and why.
    expect(published).toEqual([
      {
        detailType: 'Delivery Rollback',
        detail: expect.objectContaining({
          delivery,
          from: v2,
          to: v1,
          by: alice.arn,
          reason: 'INC-77: 5xx since v2',
          through: [gate],
        }),
      },
    ]);
    // In the delivery's events and status, with the verified identity and the reason.
    const [event] = await listEvents(deps.db, delivery, 1);
    expect(event).toMatchObject({ outcome: 'Succeeded', revision: v1 });
    expect(event!.message).toContain(`rolled back from ${v2} to ${v1} by ${ALICE}: INC-77: 5xx since v2`);
    expect(await getStatus(deps.db, delivery)).toMatchObject({
      lastAppliedRevision: v1,
      rollback: { id: made.request.id, by: alice.arn },
      rollbackSettled: made.request.id,
    });

    // v3 stays held, and the freeze still corrects drift, at the rolled-back revision.
    await core.patchNamespacedConfigMap(
      { name: 'app', namespace: ns, body: [{ op: 'replace', path: '/data/value', value: 'edited by hand' }] },
      undefined,
    );
    deps.clock.advance(30_000);
    const frozen = await run(delivery, deps);
    expect(frozen).toMatchObject({ outcome: 'Blocked', appliedRevision: v1, heldRevision: v3 });
    expect(frozen.message).toContain(`re-applied ${v1} (drift corrected); revision ${v3} is held`);
    expect(await applied()).toBe('v1');

    // When the gate opens, the newer push goes forward (the rollback rejected v2 only).
    await open();
    deps.clock.advance(60_000);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v3 });
    expect(await applied()).toBe('v3');
    expect((await listAppliedRevisions(deps.db, delivery)).map((r) => r.revision).sort()).toEqual(
      [v1, v2, v3].sort(),
    );
  });

  it('keeps the delivery at the rolled-back revision while its tag still resolves to the digest it left, until a newer push', async () => {
    const { deps, delivery, v1, v2, pushValue, applied, handler } = await appliedTwice();
    const made = await signedRollback(handler, { delivery, revision: digestOf(v1), reason: 'INC-78' });
    expect(made.request).toMatchObject({ from: v2, to: v1, through: [] });
    expect(await applied()).toBe('v1');
    deps.clock.advance(60_000);
    const kept = await run(delivery, deps);
    expect(kept).toMatchObject({ outcome: 'Succeeded', revision: v1 });
    expect(await applied()).toBe('v1');
    // A second rollback without --to has nowhere to go: v2 is the one it was rolled back from.
    await expect(signedRollback(handler, { delivery, reason: 'again' })).rejects.toThrow(
      `delivery '${delivery}' has applied no revision before ${v1} but ${v2}, which it was rolled back from`,
    );
    const v3 = await pushValue('v3');
    deps.clock.advance(60_000);
    expect(await run(delivery, deps)).toMatchObject({ outcome: 'Succeeded', revision: v3 });
    expect(await applied()).toBe('v3');
  });
});

describe('what a rollback is refused', () => {
  it('a gate that holds rollback refuses it, naming the gate; nothing is stored or applied', async () => {
    const { deps, delivery, gate, v1, applied, handler, published, close } = await appliedTwice({
      holds: ['revisions', 'rollback'],
    });
    await close();
    await expect(signedRollback(handler, { delivery, reason: 'INC-79' })).rejects.toThrow(
      `the rollback of delivery '${delivery}' to ${v1} is refused: gate '${gate}' is closed and holds rollbacks too (holds: [revisions, rollback])`,
    );
    expect((await getStatus(deps.db, delivery))?.rollback).toBeUndefined();
    expect(published).toEqual([]);
    expect(await applied()).toBe('v2');
  });

  it('a run holds a rollback asked for before its gate came to hold rollback, naming the gate, and applies nothing', async () => {
    const { deps, delivery, gate, v1, v2, applied, gateDeps, close } = await appliedTwice();
    await close();
    // Asked for while the gate let rollbacks through; the catch-up is lost (the next run takes it).
    const late = gateHandler(() => ({ ...gateDeps, reconcileNow: undefined }));
    expect(await signedRollback(late, { delivery, reason: 'INC-83' })).toMatchObject({ outcome: 'accepted' });
    await registerGate(deps, { name: gate, default: 'closed', holds: ['revisions', 'rollback'] });
    deps.clock.advance(30_000);
    const held = await run(delivery, deps);
    expect(held).toMatchObject({ outcome: 'Blocked', reason: 'GateClosed', heldRevision: v1 });
    expect(held.message).toContain(
      `the rollback of delivery '${delivery}' to ${v1} is held: gate '${gate}' holds rollbacks too`,
    );
    expect(await applied()).toBe('v2');
    expect(await getStatus(deps.db, delivery)).toMatchObject({
      lastAppliedRevision: v2,
      pendingRevision: v1,
    });
  });

  it('a digest the delivery never applied is refused, naming the delivery and the digest; a tag alone never names one', async () => {
    const { deps, delivery, pushValue, applied, handler } = await appliedTwice();
    const pushedNotApplied = digestOf(await pushValue('never'));
    await expect(
      signedRollback(handler, { delivery, revision: pushedNotApplied, reason: 'INC-80' }),
    ).rejects.toThrow(`delivery '${delivery}' has never applied ${pushedNotApplied}`);
    const stranger = `sha256:${'e'.repeat(64)}`;
    await expect(signedRollback(handler, { delivery, revision: stranger, reason: 'INC-80' })).rejects.toThrow(
      `delivery '${delivery}' has never applied ${stranger}`,
    );
    await expect(
      signedRollback(handler, { delivery, revision: 'release', reason: 'INC-80' }),
    ).rejects.toThrow(/"revision": "release" names no digest/);
    expect((await getStatus(deps.db, delivery))?.rollback).toBeUndefined();
    expect(await applied()).toBe('v2');
  });

  it('an unsigned rollback, one signed by a principal not granted the rollbacks entry, or one sent to another entry is refused', async () => {
    const { deps, delivery, handler, gateDeps, applied } = await appliedTwice();
    const fields = { action: 'rollback', delivery, reason: 'INC-81' };
    await expect(handler(fields, ROLLBACKS_ENTRY)).rejects.toThrow(/a rollback takes a verified identity/);
    await expect(handler({ ...fields, requestedBy: 'alice' })).rejects.toThrow(
      /a rollback takes a verified identity/,
    );
    // Signed, but through break_glass: refused, pointing to the rollbacks entry.
    await expect(signedRollback(handler, { delivery, reason: 'INC-81' }, alice, BREAK_GLASS)).rejects.toThrow(
      /send delivery rollbacks to the gate function's rollbacks entry/,
    );
    // Signed by bob, who is granted only break_glass: who signed must be who may act.
    const onlyAlice = gateHandler(() => ({
      ...gateDeps,
      signers: signersGranting({ rollbacks: [alice.arn], break_glass: [bob.arn] }),
    }));
    await expect(signedRollback(onlyAlice, { delivery, reason: 'INC-81' }, bob)).rejects.toThrow(
      `the rollback of delivery '${delivery}' refused: signed by ${bob.arn}: ${bob.arn} is not granted the entry rollbacks`,
    );
    expect((await getStatus(deps.db, delivery))?.rollback).toBeUndefined();
    expect(await applied()).toBe('v2');
    // The grantee may.
    expect(await signedRollback(onlyAlice, { delivery, reason: 'INC-81' })).toMatchObject({
      outcome: 'accepted',
    });
    expect(await applied()).toBe('v1');
  });

  it("a rollout's member is refused, pointed to sluice rollout rollback", async () => {
    const { handler, waves, name } = await fleet(bed, { waves: [1], start: new Date().toISOString() });
    const member = waves[0]![0]!;
    await expect(signedRollback(handler, { delivery: member, reason: 'INC-82' })).rejects.toThrow(
      `delivery '${member}' is a member of rollout '${name}': its rollback follows the rollout's rules`,
    );
    await expect(signedRollback(handler, { delivery: member, reason: 'INC-82' })).rejects.toThrow(
      `sluice rollout rollback ${name} --reason`,
    );
  });
});
