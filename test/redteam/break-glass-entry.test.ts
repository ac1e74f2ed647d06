// Red team: ways into a break-glass override that held (each test asserts the secure behaviour
// and passes on the current code): proof replay, a gate request's proof reused as an override's,
// the override sent to another entry or the unqualified function, a claim without a proof, a
// window past maxOverride, names that differ by case or Unicode, and a tag without a digest.
import { describe, expect, inject, it } from 'vitest';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { gateRequestDigest } from '../../functions/core/access/proof.ts';
import {
  overrideRequestDigest,
  type OverrideFields,
} from '../../functions/core/break-glass/override-event.ts';
import { activeOverrides } from '../../functions/core/store/gate-overrides.ts';
import { gateHandler } from '../../functions/gate/handler.ts';
import { proveRequest } from '../../bin/commands/signed-gate-request.ts';
import { engineDeps } from '../support/deliveries.ts';
import { inProcessGateDeps, manualClock, registerGate } from '../support/gates.ts';
import { testbed, uniqueName } from '../support/testbed.ts';
import { putDelivery } from '../../functions/core/store/deliveries.ts';
import { parseDelivery } from '../../functions/core/config/index.ts';

const bed = testbed();
const REGION = 'eu-west-1';
const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:sluice-gate';
const alice = TEST_IDENTITIES.alice;
const DIGEST = `sha256:${'a'.repeat(64)}`;

const prove = (hash: string) => {
  process.env.AWS_ENDPOINT_URL_STS = inject('components').sts.endpoint;
  return proveRequest(hash, FUNCTION_ARN, REGION, {
    accessKeyId: alice.accessKeyId,
    secretAccessKey: alice.secretAccessKey,
    sessionToken: alice.sessionToken!,
  });
};

async function setup(gateSpec: Record<string, unknown> = {}) {
  const deps = { ...engineDeps(), clock: manualClock(new Date().toISOString()) };
  const gate = uniqueName('freeze');
  const delivery = uniqueName('bge');
  await registerGate(deps, { name: gate, default: 'closed', ...gateSpec });
  await putDelivery(
    deps.db,
    parseDelivery({
      name: delivery,
      source: { url: `oci://${bed.registry.host}/${uniqueName('bge/app')}`, tag: 'release', provider: 'aws' },
      cluster: { kubeconfig: bed.kube.kubeconfig },
      gates: [{ name: gate, blocks: 'all' }],
    }),
    new Date(),
  );
  const gateDeps = { ...inProcessGateDeps(deps), reconcileNow: async () => {} };
  const handler = gateHandler(() => gateDeps);
  const fields: OverrideFields = {
    action: 'override',
    gates: [gate],
    revision: `1.3.1@${DIGEST}`,
    window: '1h',
    reason: 'INC-77',
  };
  const invoke = async (event: unknown, alias?: string) =>
    handler(event, {
      invokedFunctionArn: alias === undefined ? FUNCTION_ARN : `${FUNCTION_ARN}:${alias}`,
    }).then(
      (r) => ({ ok: true, r }),
      (e: unknown) => ({ ok: false, e: String(e) }),
    );
  const inForce = async () => (await activeOverrides(deps.db, gate, deps.clock.now())).length;
  return { deps, gate, delivery, fields, invoke, inForce };
}

describe('break-glass entry and proof: attempts that held', () => {
  it('a proof is taken once: a replay of a made override is refused', async () => {
    const { fields, invoke, inForce } = await setup();
    const event = { ...fields, proof: await prove(overrideRequestDigest(fields)) };
    expect((await invoke(event, 'break_glass')).ok).toBe(true);
    expect((await invoke(event, 'break_glass')).ok).toBe(false);
    expect(await inForce()).toBe(1);
  });

  it("a gate request's proof does not prove an override, and an override goes nowhere but break_glass", async () => {
    const { gate, fields, invoke, inForce } = await setup();
    const asRequest = await prove(gateRequestDigest({ gate, action: 'open' }));
    expect((await invoke({ ...fields, proof: asRequest }, 'break_glass')).ok).toBe(false);
    for (const alias of [undefined, `open_${gate}`, 'schedules', 'runbooks', 'BREAK_GLASS', '1'])
      expect((await invoke({ ...fields, proof: await prove(overrideRequestDigest(fields)) }, alias)).ok).toBe(
        false,
      );
    // Without a proof, a claim, whatever it says.
    expect((await invoke({ ...fields, requestedBy: 'alice' }, 'break_glass')).ok).toBe(false);
    expect((await invoke({ ...fields }, 'break_glass')).ok).toBe(false);
    expect(await inForce()).toBe(0);
  });

  it('a window past maxOverride, a tag without a digest, a blank reason and look-alike names are refused', async () => {
    const { gate, fields, invoke, inForce } = await setup({ maxOverride: '1h' });
    const tries: OverrideFields[] = [
      { ...fields, window: '1h1ms' },
      { ...fields, window: '3600001ms' },
      { ...fields, window: '-1h' },
      { ...fields, window: '0s' },
      { ...fields, revision: '1.3.1' },
      { ...fields, revision: `1.3.1@${DIGEST.toUpperCase()}` },
      { ...fields, revision: `1.3.1@sha512:${'a'.repeat(128)}` },
      { ...fields, reason: ' \t ' },
      { ...fields, reason: '\u200b' },
      { ...fields, gates: [gate.toUpperCase()] },
      { ...fields, gates: [`${gate}\u200b`] },
      { ...fields, gates: ['*'] },
    ];
    for (const attempt of tries) {
      const answer = await invoke(
        { ...attempt, proof: await prove(overrideRequestDigest(attempt)) },
        'break_glass',
      );
      expect(answer.ok, JSON.stringify(attempt)).toBe(false);
    }
    expect(await inForce()).toBe(0);
  });
});
