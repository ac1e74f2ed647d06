// Rollout actions (halt, resume, rollback) through the gate function's rollouts entry on the real
// components (DynamoDB Local, kube-apiserver, the registry, the STS stand-in that checks SigV4):
// only a proof for exactly that action, through that entry, is taken; a reason is required; an
// action that cannot be done says why and writes nothing.
import { describe, expect, it } from 'vitest';
import { proveRequest } from '../../../bin/commands/signed-gate-request.ts';
import { TEST_IDENTITIES } from '../../../dev/sigv4-identity.ts';
import { rolloutActionDigest } from '../../../functions/core/gates/rollout-action-event.ts';
import { reconcile } from '../../../functions/core/reconcile/reconcile.ts';
import { getGeneration, listRolloutActions } from '../../../functions/core/store/rollouts.ts';
import { credentialsOf, GATE_FUNCTION } from '../../support/break-glass.ts';
import { fleet, ROLLOUTS_ENTRY, signedRolloutAction } from '../../support/rollouts.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const { alice, carol } = TEST_IDENTITIES;

describe('rollout actions through the rollouts entry', () => {
  it('a signed halt stops the rollout where it is: later waves keep their revision until a resume', async () => {
    const f = await fleet(bed, { waves: [1, 1], start: new Date().toISOString() });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    // v1 went through the fleet; v2 is taken by the canary, then halted before wave 2.
    f.loseEvents();
    await reconcile(rest, f.deps);
    await f.push('v2');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await f.value(canary)).toBe('v2');
    const halted = await f.act('halt', 'INC-77: latency in eu-west-1', carol);
    expect(halted).toMatchObject({
      outcome: 'accepted',
      record: {
        action: 'halt',
        by: carol.arn,
        verified: true,
        source: 'invoke',
        reason: 'INC-77: latency in eu-west-1',
      },
      state: {
        phase: 'Halted',
        halt: { recorded: true, by: carol.arn, why: 'INC-77: latency in eu-west-1' },
      },
    });
    expect(await reconcile(rest, f.deps)).toMatchObject({ outcome: 'Blocked', reason: 'RolloutHalted' });
    expect(await f.value(rest)).toBe('v1');
    // The canary that took v2 keeps it (its drift is corrected at v2).
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await f.value(canary)).toBe('v2');

    const resumed = await f.act('resume', 'INC-77 mitigated');
    expect(resumed).toMatchObject({ record: { action: 'resume', by: alice.arn }, reconciling: [rest] });
    expect(f.gateDeps.reconciled).toMatchObject([{ delivery: rest, outcome: 'Succeeded' }]);
    expect(await f.value(rest)).toBe('v2');
    expect(resumed.state.phase).toBe('Complete');
  });

  it('a push after a halt a person recorded waits for the resume; it does not start at wave 1', async () => {
    const f = await fleet(bed, { waves: [1, 1], start: new Date().toISOString() });
    const [[canary], [rest]] = f.waves as [[string], [string]];
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    f.loseEvents();
    await reconcile(rest, f.deps);
    await f.push('v2');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    const v2 = await getGeneration(f.deps.db, f.name);
    await f.act('halt', 'INC-78: error budget burning', carol);
    // v3 is pushed while halted: no member's run starts it, the canary keeps v2, wave 2 keeps v1.
    await f.push('v3');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await reconcile(rest, f.deps)).toMatchObject({
      outcome: 'Blocked',
      reason: 'RolloutHalted',
      message: expect.stringMatching(/is halted: INC-78: error budget burning.*waits for the resume/),
    });
    expect(await getGeneration(f.deps.db, f.name)).toEqual(v2);
    expect([await f.value(canary), await f.value(rest)]).toEqual(['v2', 'v1']);
    // Resumed: v2 goes on through wave 2; then v3 starts, from wave 1.
    await f.act('resume', 'INC-78 mitigated');
    expect(await f.value(rest)).toBe('v2');
    expect(await reconcile(canary, f.deps)).toMatchObject({ outcome: 'Succeeded' });
    expect(await getGeneration(f.deps.db, f.name)).toMatchObject({ generation: v2!.generation + 1 });
    expect([await f.value(canary), await f.value(rest)]).toEqual(['v3', 'v2']);
  });

  it('takes only a proof for exactly this action, through this entry; a claim, a blank reason or an impossible action writes nothing', async () => {
    const f = await fleet(bed, { waves: [1], start: new Date().toISOString() });
    const [[only]] = f.waves as [[string]];
    const fields = { rollout: f.name, action: 'halt', reason: 'INC-1' } as const;
    // Before any revision: nothing to halt.
    await expect(f.act('halt', 'INC-1')).rejects.toThrow(
      `rollout '${f.name}': no revision has been rolled out yet: there is nothing to halt`,
    );
    await reconcile(only, f.deps);
    const before = await getGeneration(f.deps.db, f.name);

    // A proof of a halt does not prove a rollback (nor a halt for another reason).
    const proof = await proveRequest(
      rolloutActionDigest(fields),
      GATE_FUNCTION,
      'eu-west-1',
      credentialsOf(alice),
    );
    await expect(f.handler({ ...fields, action: 'rollback', proof }, ROLLOUTS_ENTRY)).rejects.toThrow(
      /STS did not verify the proof/,
    );
    // Through a gate's entry, or the function itself, a rollout action is refused.
    await expect(
      signedRolloutAction(f.handler, fields, alice, {
        invokedFunctionArn: `${GATE_FUNCTION}:open_some-gate`,
      }),
    ).rejects.toThrow(/send rollout actions to the gate function's rollouts entry/);
    await expect(f.handler(fields, { invokedFunctionArn: GATE_FUNCTION })).rejects.toThrow(
      /send rollout actions to the gate function's rollouts entry/,
    );
    // A claim through the entry (a console test event) is refused.
    await expect(f.handler(fields, ROLLOUTS_ENTRY)).rejects.toThrow(/takes a proof of its sender/);
    await expect(f.act('halt', '  ')).rejects.toThrow(/"reason" is required and may not be blank/);
    await expect(
      signedRolloutAction(f.handler, { rollout: 'no-such-rollout', action: 'halt', reason: 'x' }),
    ).rejects.toThrow("rollout 'no-such-rollout': is not registered");
    await expect(f.act('resume', 'x')).rejects.toThrow(/it is not halted, there is nothing to resume/);
    await expect(f.act('rollback', 'x')).rejects.toThrow(/has no previous revision to return to/);
    await expect(f.act('halt', 'x')).rejects.toThrow(/is complete: there is nothing to halt/);
    expect(await listRolloutActions(f.deps.db, f.name)).toEqual([]);
    expect(await getGeneration(f.deps.db, f.name)).toEqual(before);
  });
});
