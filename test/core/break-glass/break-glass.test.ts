// Break-glass overrides on the real components (DynamoDB Local, kube-apiserver, the registry, the
// STS stand-in that checks SigV4): a verified, granted principal lets ONE pinned revision through a
// closed gate for a bounded time. The gate itself does not change, every other revision and
// delivery stays held, the override ends by itself, and the mass-deletion brake never sees it.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { TEST_IDENTITIES, type TestIdentity } from '../../../dev/sigv4-identity.ts';
import { proveRequest } from '../../../bin/commands/signed-gate-request.ts';
import { evaluateGates, verdictFor } from '../../../functions/core/gates/evaluate.ts';
import {
  overrideRequestDigest,
  type OverrideFields,
} from '../../../functions/core/break-glass/override-event.ts';
import type { OverrideResult } from '../../../functions/core/break-glass/override-request.ts';
import { gateStatus, handleGateEvent } from '../../../functions/core/gates/requests.ts';
import { parseGateEvent } from '../../../functions/core/gates/event.ts';
import { activeOverrides } from '../../../functions/core/store/gate-overrides.ts';
import { getGateRequest, listGateAudit } from '../../../functions/core/store/gates.ts';
import { gateHandler } from '../../../functions/gate/handler.ts';
import { BREAK_GLASS, credentialsOf, GATE_FUNCTION, signedOverride } from '../../support/break-glass.ts';
import { sluice } from '../../support/cli.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import {
  configMapValue,
  configMapYaml,
  inProcessGateDeps,
  manualClock,
  registerGate,
  gatedDelivery,
} from '../../support/gates.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const core = bed.kubeConfig().makeApiClient(CoreV1Api);
const FUNCTION = GATE_FUNCTION;
const HOUR = 3_600_000;
const { alice } = TEST_IDENTITIES;
const ALICE = 'alice@example.com (role AWSReservedSSO_Approver_0123456789abcdef, 123456789012)';

const credentials = credentialsOf;

/** A closed gate holding one delivery, a handler with a hand-moved clock (started now: proofs are signed now). */
async function closedGate(blocks: 'all' | 'revisions' = 'all', gateSpec: Record<string, unknown> = {}) {
  const gated = await gatedDelivery(bed, {
    start: new Date().toISOString(),
    gate: { default: 'closed', window: '1h', ...gateSpec },
    blocks,
    delivery: { tag: 'release' },
    names: { gate: 'freeze', delivery: 'glass', repository: 'glass/app' },
  });
  const published: { detailType: string; detail: unknown }[] = [];
  const gateDeps = {
    ...inProcessGateDeps(gated.deps),
    publish: async (detailType: string, detail: unknown) => void published.push({ detailType, detail }),
  };
  const handler = gateHandler(() => gateDeps);
  /** A signed override as `aws lambda invoke` of the break_glass alias sends it. */
  const override = (fields: Omit<OverrideFields, 'action'>, who: TestIdentity = alice) =>
    signedOverride(handler, fields, who);
  return { ...gated, gateDeps, handler, published, override, push: gated.pushValue, valueIn: gated.applied };
}

/** How an override's revision is shown: its digest first, the tag marked as the requester's claim. */
const claimed = (revision: string): string => {
  const [tag, digest] = revision.split('@');
  return `${digest} (tag "${tag}" claimed, not checked against the registry)`;
};

describe('a break-glass override', () => {
  it('lets the pinned revision through a closed gate, holds every other, leaves the gate as it was, and ends by itself', async () => {
    const { clock, deps, gate, delivery, gateDeps, override, published, push, valueIn } = await closedGate();
    const hotfix = await push('1.3.1');
    expect(await run(delivery, deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'GateClosed',
      revision: hotfix,
    });

    const made = await override({ gates: [gate], revision: hotfix, window: '1h', reason: 'INC-77 hotfix' });
    expect(made).toMatchObject({ outcome: 'accepted', reconciling: [delivery] });
    // Without --delivery, the scope is the deliveries that use the gate when it is made, named.
    expect(made.message).toContain(
      `break-glass override of gate '${gate}': lets ${claimed(hotfix)} (deliveries ${delivery}) until`,
    );
    expect(made.message).toContain(`by ${ALICE}: INC-77 hotfix; reconciling ${delivery}`);
    expect(gateDeps.reconciled.at(-1)).toMatchObject({ outcome: 'Succeeded', revision: hotfix });
    expect(await valueIn()).toBe('1.3.1');

    // The gate itself is untouched: still closed, no request stored.
    expect((await gateStatus(gate, gateDeps)).status).toMatchObject({ state: 'closed', byRequest: false });
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    // Loud: a Gate Override event naming who, what, why and until when.
    expect(published).toEqual([
      {
        detailType: 'Gate Override',
        detail: expect.objectContaining({
          gates: [gate],
          revision: hotfix,
          madeBy: alice.arn,
          reason: 'INC-77 hotfix',
          reconciling: [delivery],
        }),
      },
    ]);

    // Another revision pushed during the override stays held.
    clock.advance(5 * 60_000);
    const next = await push('1.4.0');
    expect(await run(delivery, deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'GateClosed',
      revision: next,
    });
    expect(await valueIn()).toBe('1.3.1');

    // The override ends by itself, computed from its stored window: the hotfix is held again.
    const evaluated = async () =>
      verdictFor(
        await evaluateGates(delivery, [{ name: gate, blocks: 'all' }], deps.db, clock.now()),
        hotfix,
      );
    expect((await evaluated()).blockAll).toEqual([]);
    clock.advance(HOUR - 5 * 60_000 - 1);
    expect((await evaluated()).blockAll).toEqual([]);
    clock.advance(1);
    expect((await evaluated()).blockAll).toMatchObject([{ name: gate }]);
    expect(await activeOverrides(deps.db, gate, clock.now())).toEqual([]);
    expect((await gateStatus(gate, gateDeps)).overrides).toBeUndefined();
  });

  it('is for the deliveries it names: another delivery behind the same gate stays held', async () => {
    const { deps, gate, delivery, override, push } = await closedGate('revisions');
    const other = uniqueName('other');
    await registerDelivery(deps, bed, {
      name: other,
      repository: uniqueName('glass/other'),
      gates: [{ name: gate, blocks: 'revisions' }],
    });
    const hotfix = await push('1.3.1');
    const made = await override({
      gates: [gate],
      deliveries: [delivery],
      revision: hotfix,
      window: '30m',
      reason: 'INC-78',
    });
    expect(made.reconciling).toEqual([delivery]);
    const otherVerdict = verdictFor(
      await evaluateGates(other, [{ name: gate, blocks: 'revisions' }], deps.db, deps.clock.now()),
      hotfix,
    );
    expect(otherVerdict.blockRevisions).toMatchObject([{ name: gate }]);
  });

  it('--all-gates --delivery overrides every gate of that delivery, and only for it', async () => {
    const { deps, gate, delivery, repository, override, push, valueIn } = await closedGate('all');
    const second = uniqueName('sre');
    await registerGate(deps, { name: second, default: 'closed' });
    await registerDelivery(deps, bed, {
      name: delivery,
      repository,
      tag: 'release',
      gates: [
        { name: gate, blocks: 'all' },
        { name: second, blocks: 'revisions' },
      ],
    });
    const hotfix = await push('2.0.1');
    const made = await override({
      allGates: true,
      deliveries: [delivery],
      revision: hotfix,
      window: '15m',
      reason: 'INC-79',
    });
    expect(made.overrides.map((o) => o.gate)).toEqual([gate, second].sort());
    expect(made.overrides.every((o) => o.deliveries?.join() === delivery)).toBe(true);
    expect(await valueIn()).toBe('2.0.1');
  });
});

describe('who may override, and how far', () => {
  it('a claim is refused: a console test event or a direct invocation without a proof, even through break_glass', async () => {
    const { deps, gate, handler, push } = await closedGate();
    const hotfix = await push('1.3.1');
    const fields = { action: 'override', gates: [gate], revision: hotfix, window: '1h', reason: 'INC-77' };
    await expect(handler({ ...fields, requestedBy: 'alice' })).rejects.toThrow(/takes a verified identity/);
    await expect(handler(fields, BREAK_GLASS)).rejects.toThrow(/takes a verified identity/);
    await expect(handler({ gate, action: 'open', requestedBy: 'alice' }, BREAK_GLASS)).rejects.toThrow(
      /takes a verified identity/,
    );
    expect(await activeOverrides(deps.db, gate, deps.clock.now())).toEqual([]);
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it('a signed override sent to a gate entry (open_<gate>) instead of break_glass is refused', async () => {
    const { deps, gate, handler, push } = await closedGate();
    const request: OverrideFields = {
      action: 'override',
      gates: [gate],
      revision: await push('1'),
      window: '1h',
      reason: 'x',
    };
    const proof = await proveRequest(
      overrideRequestDigest(request),
      FUNCTION,
      'eu-west-1',
      credentials(alice),
    );
    await expect(
      handler({ ...request, proof }, { invokedFunctionArn: `${FUNCTION}:open_${gate}` }),
    ).rejects.toThrow(/send break-glass overrides to the gate function's break_glass entry/);
    expect(await activeOverrides(deps.db, gate, deps.clock.now())).toEqual([]);
  });

  it.each([
    ['no reason', {}, /"reason" is required and may not be blank/],
    ['a blank reason', { reason: '   ' }, /"reason" is required and may not be blank/],
    [
      'a reason with a newline',
      { reason: 'INC-1\nforged row' },
      /"reason" contains the control character \\n/,
    ],
    ['no revision', { revision: undefined }, /"revision" is missing/],
    ['a tag without a digest', { revision: 'v1.3.1' }, /does not name a digest/],
    ['no window', { window: undefined }, /"window" is missing/],
  ])('%s is refused, and nothing is stored', async (_, change, message) => {
    const { deps, gate, override, push } = await closedGate();
    const fields = { gates: [gate], revision: await push('1'), window: '1h', ...change };
    await expect(override(fields as Omit<OverrideFields, 'action'>)).rejects.toThrow(message);
    expect(await activeOverrides(deps.db, gate, deps.clock.now())).toEqual([]);
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });

  it("--for longer than the gate's maxOverride is refused, naming the limit (default 4h)", async () => {
    const { deps, gate, override, push } = await closedGate('all', { maxOverride: '1h' });
    const revision = await push('1');
    await expect(override({ gates: [gate], revision, window: '90m', reason: 'INC-80' })).rejects.toThrow(
      `gate '${gate}': an override may last at most 1h (its maxOverride), not 1h30m; nothing was overridden`,
    );
    const plain = await closedGate();
    await expect(
      plain.override({
        gates: [plain.gate],
        revision: await plain.push('1'),
        window: '5h',
        reason: 'INC-80',
      }),
    ).rejects.toThrow(/at most 4h \(its maxOverride\)/);
    expect(await activeOverrides(deps.db, gate, deps.clock.now())).toEqual([]);
  });
});

describe('what an override never bypasses', () => {
  it("the mass-deletion brake: an override of a gate that is also the delivery's pruneLimitGate does not open the brake", async () => {
    const clock = manualClock(new Date().toISOString());
    const deps = { ...engineDeps(), clock };
    const gate = uniqueName('brake');
    const delivery = uniqueName('braked');
    const ns = uniqueName('braked');
    const repository = uniqueName('glass/braked');
    await createNamespace(bed.kubeConfig(), ns);
    await registerGate(deps, { name: gate, default: 'closed', window: '1h' });
    await registerDelivery(deps, bed, {
      name: delivery,
      repository,
      tag: 'release',
      prune: true,
      pruneLimit: 1,
      pruneLimitGate: gate,
      gates: [{ name: gate, blocks: 'all' }],
    });
    const gateDeps = inProcessGateDeps(deps);
    const files = (names: string[]) =>
      Object.fromEntries(names.map((name) => [`${name}.yaml`, configMapYaml(name, ns, name)]));
    const v1 = `release@${await pushFiles(bed, repository, 'release', files(['a', 'b', 'c']))}`;
    await handleGateEvent(
      parseGateEvent({
        gate,
        action: 'open',
        revision: v1,
        reason: 'first release',
        requestedBy: 'ops',
        source: 'cli',
      }),
      gateDeps,
    );
    expect(gateDeps.reconciled.at(-1)).toMatchObject({ outcome: 'Succeeded', revision: v1 });
    clock.advance(1_000);
    await handleGateEvent(
      parseGateEvent({ gate, action: 'close', reason: 'freeze', requestedBy: 'ops', source: 'cli' }),
      gateDeps,
    );

    // v2 deletes two of three objects, past pruneLimit 1: the brake's gate (the same gate) must open for it.
    const v2 = `release@${await pushFiles(bed, repository, 'release', files(['a']))}`;
    const handler = gateHandler(() => gateDeps);
    const request: OverrideFields = {
      action: 'override',
      gates: [gate],
      revision: v2,
      window: '1h',
      reason: 'INC-81',
    };
    const proof = await proveRequest(
      overrideRequestDigest(request),
      FUNCTION,
      'eu-west-1',
      credentials(alice),
    );
    const made = (await handler({ ...request, proof }, BREAK_GLASS)) as OverrideResult;
    expect(made.outcome).toBe('accepted');
    // Through the release gate, stopped by the brake: nothing applied, nothing pruned.
    expect(gateDeps.reconciled.at(-1)).toMatchObject({
      outcome: 'Blocked',
      reason: 'PruneLimitExceeded',
      revision: v2,
    });
    for (const name of ['b', 'c']) expect(await configMapValue(core, name, ns)).toBe(name);
  });

  it('a gate that is only a pruneLimitGate cannot be overridden at all', async () => {
    const clock = manualClock(new Date().toISOString());
    const deps = { ...engineDeps(), clock };
    const brake = uniqueName('brakeonly');
    await registerGate(deps, { name: brake, default: 'closed' });
    await registerDelivery(deps, bed, {
      name: uniqueName('braked'),
      repository: uniqueName('glass/x'),
      pruneLimitGate: brake,
    });
    const handler = gateHandler(() => inProcessGateDeps(deps));
    const request: OverrideFields = {
      action: 'override',
      gates: [brake],
      revision: `sha256:${'a'.repeat(64)}`,
      window: '1h',
      reason: 'INC-82',
    };
    const proof = await proveRequest(
      overrideRequestDigest(request),
      FUNCTION,
      'eu-west-1',
      credentials(alice),
    );
    await expect(handler({ ...request, proof }, BREAK_GLASS)).rejects.toThrow(
      /holds no delivery's releases .* an override never opens the mass-deletion brake/,
    );
    expect(await activeOverrides(deps.db, brake, clock.now())).toEqual([]);
  });
});

describe('it shows', () => {
  it('in sluice gates (and --json) while in force, and as OVERRIDE in sluice gate history', async () => {
    const { clock, delivery, gate, override, push } = await closedGate();
    const hotfix = await push('1.3.1');
    const made = await override({ gates: [gate], revision: hotfix, window: '2h', reason: 'INC-77 hotfix' });
    const at = clock.now().toISOString();
    const endsAt = made.overrides[0]!.endsAt.replace(/\.\d{3}Z$/, 'Z');

    const table = await sluice('gates', gate, '--at', at);
    expect(table.stdout).toMatch(new RegExp(`^${gate}\\s+closed\\s+closed\\s`, 'm'));
    expect(table.stdout).toContain(
      `OVERRIDE gate '${gate}' (break-glass): lets ${claimed(hotfix)} (deliveries ${delivery}) until ${endsAt} by ${ALICE}: INC-77 hotfix (ends in 2h)`,
    );
    const json = JSON.parse((await sluice('gates', gate, '--at', at, '--json')).stdout);
    expect(json).toMatchObject({
      status: { state: 'closed' },
      overrides: [
        {
          gate,
          revision: hotfix,
          madeBy: alice.arn,
          reason: 'INC-77 hotfix',
          endsAt: made.overrides[0]!.endsAt,
        },
      ],
    });
    const later = new Date(clock.now().getTime() + 2 * HOUR).toISOString();
    expect((await sluice('gates', gate, '--at', later)).stdout).not.toContain('OVERRIDE');

    const history = (await sluice('gate', 'history', gate)).stdout.trim().split('\n');
    expect(history).toHaveLength(2);
    expect(history[1]).toMatch(
      new RegExp(
        `\\s+OVERRIDE\\s+${claimed(hotfix).replace(/[.()"]/g, '\\$&')}\\s+2h\\s+${ALICE.replace(/[().]/g, '\\$&')}\\s+invoke\\s+accepted\\s+INC-77 hotfix$`,
      ),
    );
  });
});
