// The spec custom resource handler writing rollouts, as the CDK Provider framework invokes it, on
// DynamoDB Local: the spec and its member lookups on create, the members reconciled when the waves
// change, and on removal the rollout with its generation and audit trail (its members stay).
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  getGeneration,
  getRollout,
  listRolloutActions,
  recordRolloutAction,
  rolloutOfDelivery,
  startGeneration,
} from '../../../functions/core/store/rollouts.ts';
import { handler } from '../../../functions/spec-resource/handler.ts';
import { recordReconcileInvocations } from '../../support/aws-recorder.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { specEvents } from '../../support/spec-events.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const context = (id: string) => ({ awsRequestId: id }) as Context;
const { invocationsOf } = recordReconcileInvocations();

const event = specEvents('rollout');

describe('spec handler: rollouts', () => {
  it('create stores the rollout and its member lookups; update reconciles the members; delete removes it all', async () => {
    const name = uniqueName('fleet');
    const [canary, eu, us] = ['canary', 'eu', 'us'].map((member) => uniqueName(member)) as [
      string,
      string,
      string,
    ];
    const spec = (waves: string[][]) => ({
      name,
      source: { url: `oci://${bed.registry.host}/spec/fleet`, tag: 'main', provider: 'aws' },
      waves: waves.map((deliveries, w) => ({ deliveries, ...(w === 0 && { soak: '1800s' }) })),
    });
    const created = await handler(event('Create', spec([[canary], [eu]])), context('r1'));
    expect(created.PhysicalResourceId).toMatch(new RegExp(`^sluice/rollout/${name}/`));
    expect(await getRollout(deps.db, name)).toMatchObject({
      name,
      waves: [{ deliveries: [canary], soakMs: 1_800_000 }, { deliveries: [eu] }],
      supersede: 'wait',
    });
    expect(await rolloutOfDelivery(deps.db, eu)).toBe(name);
    // Its members reconcile when their own resources are created (after the rollout's).
    expect(invocationsOf(canary)).toHaveLength(0);

    const updated = await handler(
      event('Update', spec([[canary], [eu, us]]), created.PhysicalResourceId),
      context('r2'),
    );
    expect(updated.PhysicalResourceId).toBe(created.PhysicalResourceId);
    expect(await rolloutOfDelivery(deps.db, us)).toBe(name);
    expect([canary, eu, us].map((member) => invocationsOf(member).length)).toEqual([1, 1, 1]);

    // A generation and an action, to be removed with it.
    await startGeneration(
      deps.db,
      name,
      {
        generation: 1,
        digest: `sha256:${'a'.repeat(64)}`,
        revision: `main@sha256:${'a'.repeat(64)}`,
        startedAt: new Date().toISOString(),
        kind: 'rollout',
        startedBy: 'source',
      },
      undefined,
    );
    await recordRolloutAction(
      deps.db,
      name,
      {
        action: 'halt',
        generation: 1,
        at: new Date().toISOString(),
        by: 'sluice',
        verified: true,
        reason: 'x',
      },
      0,
    );
    await handler(event('Delete', spec([[canary], [eu, us]]), created.PhysicalResourceId), context('r3'));
    expect(await getRollout(deps.db, name)).toBeUndefined();
    expect(await getGeneration(deps.db, name)).toBeUndefined();
    expect(await listRolloutActions(deps.db, name)).toEqual([]);
    expect(await rolloutOfDelivery(deps.db, us)).toBeUndefined();
  });

  it('an invalid rollout fails the deployment naming the field, and stores nothing; a replaced resource keeps it', async () => {
    const name = uniqueName('fleet');
    const source = { url: `oci://${bed.registry.host}/spec/fleet`, tag: 'main', provider: 'aws' };
    await expect(handler(event('Create', { name, source, waves: [] }), context('r4'))).rejects.toThrow(
      `rollout ${name}: waves`,
    );
    expect(await getRollout(deps.db, name)).toBeUndefined();

    const spec = { name, source, waves: [{ deliveries: [uniqueName('m')] }] };
    const old = await handler(event('Create', spec), context('r5'));
    const replacement = await handler(event('Create', spec), context('r6'));
    await handler(event('Delete', spec, old.PhysicalResourceId), context('r7'));
    expect(await getRollout(deps.db, name)).toMatchObject({ name });
    await handler(event('Delete', spec, replacement.PhysicalResourceId), context('r8'));
    expect(await getRollout(deps.db, name)).toBeUndefined();
  });
});
