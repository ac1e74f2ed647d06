// handleSpecEvent: the delete of a delivery while a reconcile holds its lease (it waits, then
// deletes), and an update that changes what finds the delivery.
import { describe, expect, it } from 'vitest';
import {
  handleSpecEvent,
  specPhysicalId,
  type SpecDeps,
} from '../../../functions/core/spec-resource/resource.ts';
import { putDelivery } from '../../../functions/core/store/deliveries.ts';
import { LeaseHeldError } from '../../../functions/core/store/lease.ts';
import {
  deliveriesOfRepository,
  deliveriesUsingGate,
} from '../../../functions/core/store/delivery-lookups.ts';
import { parseDelivery } from '../../../functions/core/config/index.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { manualClock } from '../../support/gates.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

testbed();
const deps = engineDeps();

async function registered(name: string): Promise<string> {
  const delivery = parseDelivery({
    name,
    source: { url: 'oci://registry.example/app' },
    cluster: { eks: { name: 'prod', region: 'eu-west-1' } },
  });
  await putDelivery(deps.db, delivery, new Date());
  return specPhysicalId('delivery', name, 'req-1');
}

function specDeps(deleteDelivery: SpecDeps['deleteDelivery'], leaseWaitMs: number) {
  const clock = manualClock('2026-03-27T09:00:00Z');
  const slept: number[] = [];
  const specDeps: SpecDeps = {
    db: deps.db,
    // Sleeping moves the clock instead of waiting.
    clock: {
      ...clock,
      sleep: async (ms) => {
        slept.push(ms);
        clock.advance(ms);
      },
    },
    deleteDelivery,
    leaseWaitMs,
  };
  return { specDeps, slept };
}

const leaseHeld = (name: string) => new LeaseHeldError(name);

describe('spec resource delete', () => {
  it('waits while a reconcile holds the lease, then deletes', async () => {
    const name = uniqueName('busy');
    const id = await registered(name);
    let calls = 0;
    const { specDeps: d, slept } = specDeps(async () => {
      if (++calls < 3) throw leaseHeld(name);
      return { deleted: ['a'], policy: 'Delete' };
    }, 60_000);
    await handleSpecEvent(
      {
        RequestType: 'Delete',
        RequestId: 'req-2',
        PhysicalResourceId: id,
        ResourceProperties: { Kind: 'delivery', Name: name, Spec: '{}' },
      },
      d,
    );
    expect(calls).toBe(3);
    expect(slept).toEqual([5_000, 5_000]);
  });

  it('gives up after leaseWaitMs with the lease error', async () => {
    const name = uniqueName('stuck');
    const id = await registered(name);
    const { specDeps: d } = specDeps(async () => {
      throw leaseHeld(name);
    }, 12_000);
    await expect(
      handleSpecEvent(
        {
          RequestType: 'Delete',
          RequestId: 'req-3',
          PhysicalResourceId: id,
          ResourceProperties: { Kind: 'delivery', Name: name, Spec: '{}' },
        },
        d,
      ),
    ).rejects.toThrow('is being reconciled right now');
  });
});

describe('spec resource update', () => {
  it('a CDK update that moves a delivery to another repository and gate moves its lookups: the old ones find nothing', async () => {
    const name = uniqueName('moved');
    const [oldRepo, newRepo] = [uniqueName('team/old'), uniqueName('team/new')];
    const [oldGate, newGate] = [uniqueName('old-gate'), uniqueName('new-gate')];
    const spec = (repository: string, gate: string) =>
      JSON.stringify({
        name,
        source: { url: `oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/${repository}` },
        cluster: { eks: { name: 'prod', region: 'eu-west-1' } },
        gates: [{ name: gate }],
      });
    const d: SpecDeps = {
      db: deps.db,
      clock: manualClock('2026-03-27T09:00:00Z'),
      deleteDelivery: async () => ({ deleted: [], policy: 'Delete' }),
    };
    const created = await handleSpecEvent(
      {
        RequestType: 'Create',
        RequestId: 'req-create',
        ResourceProperties: { Kind: 'delivery', Name: name, Spec: spec(oldRepo, oldGate) },
      },
      d,
    );
    await handleSpecEvent(
      {
        RequestType: 'Update',
        RequestId: 'req-update',
        PhysicalResourceId: created.PhysicalResourceId,
        ResourceProperties: { Kind: 'delivery', Name: name, Spec: spec(newRepo, newGate) },
      },
      d,
    );
    const registry = { account: '123456789012', region: 'eu-west-1' };
    expect(await deliveriesOfRepository(deps.db, oldRepo, registry)).toEqual([]);
    expect(await deliveriesUsingGate(deps.db, oldGate)).toEqual([]);
    expect(await deliveriesOfRepository(deps.db, newRepo, registry)).toEqual([name]);
    expect(await deliveriesUsingGate(deps.db, newGate)).toEqual([name]);
  });
});
