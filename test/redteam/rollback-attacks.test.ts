// Red team: `sluice rollback` (issue 42) on the real components (the gate function invoked through
// its entries with STS-signed proofs, the table on DynamoDB Local, the registry and the cluster),
// attacking the promise in docs/rollback.md without reading the feature's own tests.
//
// Breach found:
// 1. A second rollback while a first one is in force brought back the revision the first rolled
//    back from: the first (B → A) keeps A while the source resolves to B; the second (A → Z) knew
//    only A and Z, so the run took B (still at the tag) for "a newer push" and applied it at once
//    with no freeze, or when the freeze ended. Asked to go back to Z, the delivery went to B.
//
// Attacks that held are kept below, grouped, so that the promise is documented.
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { gateRequestDigest } from '../../functions/core/access/proof.ts';
import { parseGate, parseRollout } from '../../functions/core/config/index.ts';
import { rollbackRequestDigest, type RollbackFields } from '../../functions/core/rollback/event.ts';
import { listAppliedRevisions } from '../../functions/core/store/applied-revisions.ts';
import { putRollout } from '../../functions/core/store/rollouts.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { deliveryKey } from '../../functions/core/store/table-client.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { gatedDelivery, inProcessGateDeps, registerGate, signersGranting } from '../support/gates.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const FUNCTION_ARN = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:sluice-gate`;
const { alice, mallory } = TEST_IDENTITIES;
type Identity = typeof alice;

const prove = (hash: string, who: Identity = alice) => {
  process.env.AWS_ENDPOINT_URL_STS = inject('components').sts.endpoint;
  return proveRequest(hash, FUNCTION_ARN, REGION, {
    accessKeyId: who.accessKeyId,
    secretAccessKey: who.secretAccessKey,
    sessionToken: who.sessionToken,
  });
};

/**
 * A delivery behind one gate (`gate`, `blocks`), with the gate function granting rollbacks to
 * alice's session only (mallory is granted break_glass, not rollbacks).
 */
async function setup(gate: Record<string, unknown> = { default: 'open' }, blocks?: 'all' | 'revisions') {
  const g = await gatedDelivery(bed, {
    start: new Date().toISOString(),
    gate,
    ...(blocks && { blocks }),
    names: { gate: 'rt-rb-gate', delivery: 'rt-rb', repository: 'rt-rb/app' },
  });
  const published: { type: string; detail: Record<string, unknown> }[] = [];
  const gateDeps = {
    ...inProcessGateDeps(g.deps),
    signers: signersGranting({ rollbacks: [alice.arn], break_glass: [mallory.arn] }),
    publish: async (type: string, detail: unknown) => {
      published.push({ type, detail: detail as Record<string, unknown> });
    },
  };
  const handler = gateHandler(() => gateDeps);
  /** Invokes the gate function through `alias` (null: the unqualified function). */
  const invoke = async (event: unknown, alias: string | null = 'rollbacks') => {
    g.clock.set(new Date().toISOString());
    return handler(event, {
      invokedFunctionArn: alias === null ? FUNCTION_ARN : `${FUNCTION_ARN}:${alias}`,
    }).then(
      (r) => ({ ok: true as const, r: r as Record<string, unknown>, e: '' }),
      (e: unknown) => ({ ok: false as const, r: undefined, e: String(e) }),
    );
  };
  /** A rollback signed by `who` for exactly `fields`, through `alias`. */
  const rollback = async (fields: Partial<RollbackFields>, who: Identity = alice, alias = 'rollbacks') => {
    const full = { action: 'rollback' as const, delivery: g.delivery, reason: 'INC-77', ...fields };
    return invoke({ ...full, proof: await prove(rollbackRequestDigest(full), who) }, alias);
  };
  const gateSpec = (spec: Record<string, unknown>) => registerGate(g.deps, { name: g.gate, ...spec });
  // Each run at the time it runs: the revisions' records are ordered by it.
  const step = () => {
    g.clock.set(new Date().toISOString());
    return run(g.delivery, g.deps);
  };
  const requested = async () => (await getStatus(g.deps.db, g.delivery))?.rollback;
  return { ...g, invoke, rollback, gateSpec, step, published, requested };
}

/** v0, v1, v2 applied in turn: answers their revisions (`main@sha256:…`). */
async function threeApplied(g: Awaited<ReturnType<typeof setup>>) {
  const revisions: string[] = [];
  for (const value of ['v0', 'v1', 'v2']) {
    revisions.push(await g.pushValue(value));
    expect(await g.step()).toMatchObject({ outcome: 'Succeeded' });
  }
  expect(await g.applied()).toBe('v2');
  return revisions as [string, string, string];
}

const digest = (revision: string) => revision.slice(revision.indexOf('sha256:'));

describe('breach: a rollback while another is in force', () => {
  it('goes where it was asked, and the revision the first one left stays rolled back (no freeze)', async () => {
    const g = await setup();
    const [v0] = await threeApplied(g);
    expect((await g.rollback({ reason: 'INC-1: v2 breaks checkout' })).ok).toBe(true);
    expect(await g.applied()).toBe('v1');
    await g.step();
    expect(await g.applied()).toBe('v1');

    // v1 is bad too: back to v0. The tag still names v2, which the first rollback left.
    const second = await g.rollback({ revision: digest(v0), reason: 'INC-1: v1 too' });
    expect(second.ok, second.e).toBe(true);
    expect(await g.applied()).toBe('v0');
    await g.step();
    expect(await g.applied()).toBe('v0');
    // And a third, without --to, does not go "back" to v2.
    await g.rollback({ reason: 'INC-1: again' });
    await g.step();
    expect(await g.applied()).not.toBe('v2');
  });

  it('and v2 does not come back when the freeze it was asked in ends', async () => {
    const g = await setup({ default: 'open' }, 'revisions');
    const [v0] = await threeApplied(g);
    await g.gateSpec({ default: 'closed' });
    expect((await g.rollback({ reason: 'INC-1: v2 breaks checkout' })).ok).toBe(true);
    expect(await g.applied()).toBe('v1');
    expect((await g.rollback({ revision: digest(v0), reason: 'INC-1: v1 too' })).ok).toBe(true);
    expect(await g.applied()).toBe('v0');
    await g.gateSpec({ default: 'open' });
    await g.step();
    expect(await g.applied()).toBe('v0');
    // A push after it goes forward, as the promise says.
    await g.pushValue('v3');
    await g.step();
    expect(await g.applied()).toBe('v3');
  });
});

describe('rollback: who may, and through which entry (held)', () => {
  it('only a signer granted rollbacks, through the rollbacks entry, once per proof', async () => {
    const g = await setup();
    await threeApplied(g);
    const fields = { action: 'rollback' as const, delivery: g.delivery, reason: 'INC-77' };
    // Not granted rollbacks (a break_glass grantee), signing for itself.
    const byMallory = await g.rollback({}, mallory);
    expect(byMallory.ok).toBe(false);
    expect(byMallory.e).toContain(mallory.arn);
    // Unsigned claims, whatever they say.
    expect((await g.invoke({ ...fields })).ok).toBe(false);
    expect((await g.invoke({ ...fields, requestedBy: alice.arn })).ok).toBe(false);
    // Alice's proof for another delivery, another reason, another revision, or a gate request.
    const other = { ...fields, delivery: uniqueName('rt-rb-other') };
    expect((await g.invoke({ ...fields, proof: await prove(rollbackRequestDigest(other)) })).ok).toBe(false);
    const otherReason = { ...fields, reason: 'INC-78' };
    expect((await g.invoke({ ...fields, proof: await prove(rollbackRequestDigest(otherReason)) })).ok).toBe(
      false,
    );
    const asGate = await prove(gateRequestDigest({ gate: g.gate, action: 'open', reason: 'INC-77' }));
    expect((await g.invoke({ ...fields, proof: asGate })).ok).toBe(false);
    // A good proof sent through every other entry, and the unqualified function.
    for (const alias of [
      null,
      `open_${g.gate}`,
      `close_${g.gate}`,
      'break_glass',
      'rollouts',
      'runbooks',
      'schedules',
      'record_pushes',
      'ROLLBACKS',
      'rollback',
      '1',
    ])
      expect(
        (await g.invoke({ ...fields, proof: await prove(rollbackRequestDigest(fields)) }, alias)).ok,
        String(alias),
      ).toBe(false);
    expect(await g.requested()).toBeUndefined();
    expect(await g.applied()).toBe('v2');

    // The one that may: taken once.
    const event = { ...fields, proof: await prove(rollbackRequestDigest(fields)) };
    expect((await g.invoke(event)).ok).toBe(true);
    const first = await g.requested();
    expect(first?.by).toBe(alice.arn);
    expect((await g.invoke(event)).ok).toBe(false);
    expect((await g.requested())?.id).toBe(first?.id);
  });

  it('through the URL, the carrier must be the signer, both ways', async () => {
    const g = await setup();
    await threeApplied(g);
    const urlEvent = async (caller: Identity, signer: Identity) => {
      const fields = { action: 'rollback' as const, delivery: g.delivery, reason: 'INC-77' };
      const body = JSON.stringify({ ...fields, proof: await prove(rollbackRequestDigest(fields), signer) });
      return g.invoke({
        version: '2.0',
        rawPath: '/',
        requestContext: {
          http: { method: 'POST', path: '/' },
          authorizer: { iam: { userArn: caller.arn, accountId: ACCOUNT } },
        },
        body,
        isBase64Encoded: false,
      });
    };
    const status = (answer: Awaited<ReturnType<typeof urlEvent>>) => answer.r?.statusCode;
    // Signed by mallory (not granted), carried by alice (granted), and the reverse.
    expect(status(await urlEvent(alice, mallory))).toBe(403);
    expect(status(await urlEvent(mallory, alice))).toBe(403);
    expect(await g.requested()).toBeUndefined();
    expect(status(await urlEvent(alice, alice))).toBe(200);
    expect((await g.requested())?.by).toBe(alice.arn);
  });
});

describe('rollback: which revision (held)', () => {
  it("never to a digest it did not apply: another delivery's, one it only tried, a tag, or look-alikes", async () => {
    const g = await setup({ default: 'open' }, 'revisions');
    const [v0] = await threeApplied(g);
    // Another delivery applied `theirs`.
    const other = uniqueName('rt-rb-other');
    const otherRepository = uniqueName('rt-rb/other');
    await registerDelivery(g.deps, bed, { name: other, repository: otherRepository, targetNamespace: g.ns });
    const theirs = await pushFiles(bed, otherRepository, 'main', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  value: theirs\n`,
    });
    expect(await run(other, g.deps)).toMatchObject({ outcome: 'Succeeded' });
    // This delivery tried a revision that failed to apply.
    const broken = await pushFiles(bed, g.repository, 'main', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Name\n  namespace: ${g.ns}\n`,
    });
    expect(await g.step()).toMatchObject({ outcome: 'Failed' });
    // And one a freeze held, never applied.
    await g.gateSpec({ default: 'closed' });
    const held = await g.pushValue('held');
    await g.step();
    expect((await getStatus(g.deps.db, g.delivery))?.pendingRevision).toBe(held);

    const tries: Partial<RollbackFields>[] = [
      { revision: theirs },
      { revision: broken },
      { revision: digest(held) },
      { revision: held },
      { revision: 'main' },
      { revision: v0.slice(0, v0.indexOf('@')) },
      { revision: digest(v0).toUpperCase().replace('SHA256', 'sha256') },
      { revision: ` ${digest(v0)}` },
      { revision: `${digest(v0)} ` },
      { revision: `main@${digest(v0)}@${digest(v0)}` },
      { revision: `sha512:${'a'.repeat(128)}` },
      { delivery: g.delivery.toUpperCase(), revision: digest(v0) },
      { delivery: ` ${g.delivery}`, revision: digest(v0) },
      { delivery: `${g.delivery}\u200b`, revision: digest(v0) },
    ];
    for (const attempt of tries) expect((await g.rollback(attempt)).ok, JSON.stringify(attempt)).toBe(false);
    expect(await g.requested()).toBeUndefined();
    expect(await g.applied()).toBe('v2');

    // A tag that names another revision beside the digest: the digest decides, as recorded.
    const tagged = await g.rollback({ revision: `9.9.9@${digest(v0)}` });
    expect(tagged.ok, tagged.e).toBe(true);
    expect((await g.requested())?.to).toBe(v0);
    expect(await g.applied()).toBe('v0');
  });

  it('not to a digest applied from another repository, nor one whose record is gone', async () => {
    const g = await setup();
    const [v0, v1] = await threeApplied(g);
    // The delivery's source moves to another repository, where v3 is applied.
    const moved = uniqueName('rt-rb/moved');
    await registerDelivery(g.deps, bed, {
      name: g.delivery,
      repository: moved,
      gates: [{ name: g.gate }],
    });
    await pushFiles(bed, moved, 'main', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${g.ns}\ndata:\n  value: "v3"\n`,
    });
    expect(await g.step()).toMatchObject({ outcome: 'Succeeded' });
    expect(await g.applied()).toBe('v3');
    for (const revision of [digest(v0), digest(v1), undefined])
      expect((await g.rollback(revision ? { revision } : {})).ok, String(revision)).toBe(false);
    expect(await g.applied()).toBe('v3');
    expect(await g.requested()).toBeUndefined();
  });

  it('not once its history is gone (the records pruned)', async () => {
    const g = await setup();
    const [v0] = await threeApplied(g);
    for (const entry of await listAppliedRevisions(g.deps.db, g.delivery))
      await g.deps.db.doc.send(
        new DeleteCommand({
          TableName: g.deps.db.table,
          Key: { pk: deliveryKey(g.delivery), sk: `applied#${entry.digest}` },
        }),
      );
    expect((await g.rollback({ revision: digest(v0) })).ok).toBe(false);
    expect((await g.rollback({})).ok).toBe(false);
    expect(await g.applied()).toBe('v2');
  });
});

describe('rollback: what a closed gate holds (held)', () => {
  it('holds: only the exact words, each once, revisions always', () => {
    const base = { name: 'rt-rb-holds', default: 'closed' };
    for (const holds of [
      ['Rollback'],
      ['revisions', 'Rollback'],
      ['revisions', ' rollback'],
      ['revisions', 'rollback '],
      ['revisions', 'rollback', 'rollback'],
      ['revisions', 'revisions'],
      ['rollback'],
      [],
      ['revisions', 'rollbacks'],
      ['revisions', 'promote'],
      ['revisions', '*'],
      'rollback',
      ['revisions', ['rollback']],
      { rollback: true },
    ])
      expect(() => parseGate({ ...base, holds }), JSON.stringify(holds)).toThrow();
    expect(parseGate({ ...base, holds: ['rollback', 'revisions'] }).holds).toEqual(['revisions', 'rollback']);
    expect(parseGate({ ...base, holds: ['revisions'] }).holds).toBeUndefined();
  });

  it('a closed gate holding rollback refuses it naming the gate, whatever it blocks; a new revision stays held', async () => {
    for (const blocks of ['all', 'revisions'] as const) {
      const g = await setup({ default: 'open' }, blocks);
      await threeApplied(g);
      await g.gateSpec({ default: 'closed', holds: ['revisions', 'rollback'] });
      const refused = await g.rollback({});
      expect(refused.ok).toBe(false);
      expect(refused.e).toContain(g.gate);
      expect(await g.requested()).toBeUndefined();
      expect(await g.applied()).toBe('v2');

      // A freeze that does not hold rollback lets it through, and holds a new push.
      await g.gateSpec({ default: 'closed' });
      expect((await g.rollback({})).ok).toBe(true);
      expect(await g.applied()).toBe('v1');
      await g.pushValue('v3');
      await g.step();
      expect(await g.applied()).toBe('v1');
      await g.gateSpec({ default: 'open' });
      await g.step();
      expect(await g.applied()).toBe('v3');
    }
  });
});

describe('rollback: a rollout member, the reason, the audit (held)', () => {
  it("a rollout's member is refused, pointed to sluice rollout rollback", async () => {
    const g = await setup();
    await threeApplied(g);
    const rollout = uniqueName('rt-rb-fleet');
    await putRollout(
      g.deps.db,
      parseRollout({
        name: rollout,
        source: { url: `oci://${bed.registry.host}/${g.repository}`, tag: 'main', provider: 'aws' },
        waves: [{ deliveries: [g.delivery] }],
      }),
      new Date(),
    );
    const refused = await g.rollback({});
    expect(refused.ok).toBe(false);
    expect(refused.e).toContain(`sluice rollout rollback ${rollout}`);
    expect(await g.requested()).toBeUndefined();
  });

  it('a reason must be one plain line of at most 1000 characters, not blank', async () => {
    const g = await setup();
    await threeApplied(g);
    for (const reason of ['', ' \t', '\u200b', 'INC\n77', 'INC\u001b[2J', 'INC\u202e77', 'x'.repeat(1001)])
      expect((await g.rollback({ reason })).ok, JSON.stringify(reason)).toBe(false);
    expect(await g.requested()).toBeUndefined();
  });

  it('the event, the status and the run name the signer, never a claimed name', async () => {
    const g = await setup();
    await threeApplied(g);
    const fields = { action: 'rollback' as const, delivery: g.delivery, reason: 'INC-77' };
    // A claimed author beside the proof is refused, not recorded.
    const claimed = { ...fields, requestedBy: 'bob' };
    expect((await g.invoke({ ...claimed, proof: await prove(rollbackRequestDigest(fields)) })).ok).toBe(
      false,
    );
    expect((await g.rollback({})).ok).toBe(true);
    expect(g.published).toHaveLength(1);
    expect(g.published[0]).toMatchObject({ type: 'Delivery Rollback', detail: { by: alice.arn } });
    expect((await g.requested())?.by).toBe(alice.arn);
    const status = await getStatus(g.deps.db, g.delivery);
    expect(status?.message).toContain('alice@example.com');
  });
});
