// DynamoDB failing under a reconcile: throttling of any one call, a lease held by a crashed run,
// and a lease lost mid-run (the renewal's conditional write fails). The run fails cleanly, never
// leaves an object outside the inventory, and the next run converges. Also gate requests whose
// transaction collides with another's.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubeClient } from '../../functions/core/kube/client.ts';
import { OWNER_LABEL } from '../../functions/core/manifests/objects.ts';
import type { ReconcileDeps } from '../../functions/core/reconcile/deps.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { handleGateEvent } from '../../functions/core/gates/requests.ts';
import { CONFLICT_ATTEMPTS, getGateRequest, listGateAudit } from '../../functions/core/store/gates.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { acquireLease, LEASE_TTL_MS } from '../../functions/core/store/lease.ts';
import { leaveLease } from '../support/lease.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { deliveryKey } from '../../functions/core/store/table-client.ts';
import { writesSince } from '../support/audit.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { faultyTable, type FaultyTable } from '../support/dynamodb-faults.ts';
import { inProcessGateDeps, registerGate } from '../support/gates.ts';
import { startKubeFaultProxy, type KubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const kube = new KubeClient(kc);
const core = kc.makeApiClient(CoreV1Api);
const deps = engineDeps();

const configMap = (name: string, ns: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  v: "${value}"\n`;

/** A delivery in its own namespace with an unlabelled bystander ConfigMap that must always survive. */
async function delivery(prefix: string) {
  const ns = uniqueName(prefix);
  const repository = uniqueName(`faults/${prefix}`);
  const name = uniqueName(prefix);
  await createNamespace(kc, ns);
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'bystander' } } });
  const track = (tag: string) =>
    registerDelivery(deps, bed, { name, repository, tag, prune: true, pruneLimit: '100%' });
  await track('main');
  const revision = (names: readonly string[], value: string, tag = 'main') =>
    pushFiles(bed, repository, tag, {
      'app.yaml': names.map((n) => configMap(n, ns, value)).join('---\n'),
    });
  return { ns, name, revision, track };
}

async function ours(ns: string, name: string): Promise<string[]> {
  return (await kube.list('v1', 'ConfigMap', `${OWNER_LABEL}=${name}`, ns))
    .map((o) => o.metadata!.name!)
    .sort();
}

async function inventoryNames(name: string): Promise<string[]> {
  return (await readInventory(deps.db, name)).map((entry) => entry.id.split('_')[1]!).sort();
}

async function runCatching(name: string, runDeps: ReconcileDeps): Promise<ReconcileResult | Error> {
  try {
    return await run(name, runDeps);
  } catch (error) {
    return error as Error;
  }
}

describe('DynamoDB throttling', () => {
  it('a run with any one of its DynamoDB calls throttled fails cleanly, and the next run converges', async () => {
    const { ns, name, revision, track } = await delivery('throttle');
    // Two revisions the delivery alternates between: each run changes, adds and prunes objects.
    const names = (k: number) =>
      k % 2 === 0 ? ['cm-0', 'cm-1', 'cm-2', 'cm-3'] : ['cm-2', 'cm-3', 'cm-4', 'cm-5'];
    await revision(names(0), 'even', 'even');
    await revision(names(1), 'odd', 'odd');
    await track('even');
    expect((await run(name, deps)).outcome).toBe('Succeeded');

    // How many calls a changing run makes, so that each of them is throttled once below.
    await track('odd');
    const counted = faultyTable(bed.dynamodb.table, () => undefined);
    expect((await run(name, { ...deps, db: counted.db })).outcome).toBe('Succeeded');
    const calls = counted.calls.length;
    expect(calls).toBeGreaterThan(4);

    for (let k = 1; k <= calls; k++) {
      const previous = names(k + 1);
      const wanted = names(k);
      await track(k % 2 === 0 ? 'even' : 'odd');
      const table: FaultyTable = faultyTable(bed.dynamodb.table, (call) =>
        call.index === k ? 'throttle' : undefined,
      );
      const outcome = await runCatching(name, { ...deps, db: table.db, leaseTtlMs: 1_000 });
      const throttled = table.failed[0];
      const context = `throttled call ${k} (${throttled?.command}): ${outcome instanceof Error ? outcome.message : `${outcome.outcome}: ${outcome.message}`}`;

      // Cleanly: the error names the throttling, or the run reports it; only a throttled release of
      // the lease after its result (the run end releases it; a separate release is the last call)
      // or of its cluster slot (once its writes are done; the slot frees itself when its time runs
      // out), or a throttled renewal (retried at the next tick, the TTL covering two misses) can
      // leave a run that succeeded.
      if (outcome instanceof Error) expect(outcome.message, context).toMatch(/throughput/);
      else if (outcome.outcome === 'Failed') expect(outcome.message, context).toMatch(/throughput/);
      else if (
        !throttled?.renewal &&
        !(throttled?.command === 'DeleteItemCommand' && throttled.pk?.startsWith('cluster#'))
      )
        expect(throttled?.index, context).toBe(table.calls.at(-1)?.index);
      // Nothing outside the inventory, nothing wrongly deleted.
      const inventory = await inventoryNames(name);
      expect(
        (await ours(ns, name)).filter((n) => !inventory.includes(n)),
        context,
      ).toEqual([]);
      for (const kept of previous.filter((n) => wanted.includes(n)))
        expect(
          await kube.get({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: kept, namespace: ns } }),
          context,
        ).toBeDefined();

      // A lease left behind (its release throttled) is watched go unrenewed for its TTL, then taken over.
      const recovery = await run(name, engineDeps());
      expect(recovery.outcome, context).toBe('Succeeded');
      expect(await ours(ns, name), context).toEqual([...wanted].sort());
      expect(await inventoryNames(name), context).toEqual([...wanted].sort());
    }
    expect((await core.readNamespacedConfigMap({ name: 'bystander', namespace: ns })).metadata?.name).toBe(
      'bystander',
    );
  });
});

describe('a lease held by a crashed run', () => {
  it('makes the next run skip without touching the cluster while it lasts; then the run converges', async () => {
    const { ns, name, revision } = await delivery('crashed');
    await revision(['a', 'b'], '1');
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const status = await getStatus(deps.db, name);
    // A live holder (renewing) makes every other run skip, whatever the clocks say.
    const live = await acquireLease(deps.db, name, 'live-run', deps.clock, { ttlMs: 900 });
    expect(live).toBeDefined();

    await revision(['b', 'c'], '2');
    const since = new Date().toISOString();
    const skipped = await run(name, engineDeps());
    expect(skipped).toMatchObject({ outcome: 'Skipped', reason: 'LeaseHeld' });
    expect(writesSince(bed, ns, since)).toEqual([]);
    expect(await getStatus(deps.db, name)).toEqual(status);
    expect(await ours(ns, name)).toEqual(['a', 'b']);
    await live?.release();

    // A holder that died: the next run watches its lease go unrenewed for its TTL, then takes over.
    await leaveLease(deps.db, name, 'crashed-run', 1_000);
    expect(await run(name, engineDeps())).toMatchObject({ outcome: 'Succeeded' });
    expect(await ours(ns, name)).toEqual(['b', 'c']);
    expect(await inventoryNames(name)).toEqual(['b', 'c']);
  });
});

describe('a lease lost mid-run', () => {
  let proxy: KubeFaultProxy;
  beforeAll(async () => {
    proxy = await startKubeFaultProxy(bed);
  });
  afterAll(() => proxy.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  /**
   * Runs `name` through the proxy; at the first request matching `when`, another run takes the
   * lease and this run's renewal fires (fake interval timer) and fails its conditional write.
   */
  async function runLosingLease(name: string, when: (request: { url: string; write: boolean }) => boolean) {
    const table = faultyTable(bed.dynamodb.table, () => undefined);
    let stolen = false;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    proxy.plan({
      beforeForward: async (request) => {
        if (stolen || !when(request)) return;
        stolen = true;
        await deps.db.doc.send(
          new UpdateCommand({
            TableName: deps.db.table,
            Key: { pk: deliveryKey(name), sk: 'status' },
            UpdateExpression: 'SET leaseHolder = :thief, leaseTtlMs = :ttl ADD leaseToken :one',
            ExpressionAttributeValues: { ':thief': 'another-run', ':ttl': 1_000, ':one': 1 },
          }),
        );
        vi.advanceTimersByTime(LEASE_TTL_MS / 3);
        await vi.waitFor(() => expect(table.conditionalFailures.length).toBeGreaterThan(0), {
          timeout: 5_000,
        });
      },
    });
    try {
      return await run(name, { ...engineDeps(), db: table.db, connect: async () => proxy.kubeConfig() });
    } finally {
      proxy.plan({});
      vi.useRealTimers();
    }
  }

  it('lost before the first write: nothing is applied or pruned, the inventory is untouched', async () => {
    const { ns, name, revision } = await delivery('lostearly');
    await revision(['a', 'b', 'c'], '1');
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const inventory = await readInventory(deps.db, name);
    await revision(['c', 'd'], '2');
    const since = new Date().toISOString();
    const status = await getStatus(deps.db, name);
    const result = await runLosingLease(name, (request) => request.url.includes('dryRun='));
    expect(result).toMatchObject({ outcome: 'Skipped', reason: 'LeaseLost' });
    expect(result.message).toMatch(
      new RegExp(`lost the lease of delivery '${name}' to another run; stopped before the next change`),
    );
    expect(writesSince(bed, ns, since)).toEqual([]);
    expect(await getStatus(deps.db, name)).toEqual(status); // its status write was fenced off
    expect(await ours(ns, name)).toEqual(['a', 'b', 'c']);
    expect(await readInventory(deps.db, name)).toEqual(inventory);
  });

  it('lost during the apply: the run stops before pruning, and what it created is in the inventory', async () => {
    const { ns, name, revision } = await delivery('lostlate');
    await revision(['a', 'b', 'c'], '1');
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    await revision(['c', 'd'], '2');
    const result = await runLosingLease(name, (request) => request.write);
    expect(result).toMatchObject({ outcome: 'Skipped', reason: 'LeaseLost' });
    expect(result.message).toMatch(/lost the lease .*stopped before the next change/);
    expect(await ours(ns, name)).toEqual(['a', 'b', 'c', 'd']); // applied, not pruned
    expect(await inventoryNames(name)).toEqual(['a', 'b', 'c', 'd']); // the write-ahead union

    expect(await run(name, engineDeps())).toMatchObject({ outcome: 'Succeeded' });
    expect(await ours(ns, name)).toEqual(['c', 'd']);
    expect(await inventoryNames(name)).toEqual(['c', 'd']);
  });
});

describe('gate requests colliding in a DynamoDB transaction (TransactionConflict)', () => {
  async function gateOn(table: FaultyTable) {
    const gate = uniqueName('conflict');
    await registerGate(deps, { name: gate, default: 'closed' });
    return { gate, gateDeps: { ...inProcessGateDeps(deps), db: table.db } };
  }
  const open = (gate: string) =>
    parseGateEvent({ gate, action: 'open', requestedBy: 'alice', reason: 'CHG-1', source: 'cli' });

  it('are tried again: the request is recorded once and audited once', async () => {
    let transactions = 0;
    const table = faultyTable(bed.dynamodb.table, (call) =>
      call.command === 'TransactWriteItemsCommand' && ++transactions <= 2 ? 'conflict' : undefined,
    );
    const { gate, gateDeps } = await gateOn(table);
    const result = await handleGateEvent(open(gate), gateDeps);
    expect(result).toMatchObject({ outcome: 'accepted', status: { state: 'open' } });
    expect(transactions).toBe(3);
    expect((await getGateRequest(deps.db, gate))?.requestedBy).toBe('alice');
    expect((await listGateAudit(deps.db, gate)).map((r) => [r.requestedBy, r.outcome])).toEqual([
      ['alice', 'accepted'],
    ]);
  });

  it('give up after as many attempts, naming the gate, with nothing recorded', async () => {
    const table = faultyTable(bed.dynamodb.table, (call) =>
      call.command === 'TransactWriteItemsCommand' ? 'conflict' : undefined,
    );
    const { gate, gateDeps } = await gateOn(table);
    await expect(handleGateEvent(open(gate), gateDeps)).rejects.toThrow(
      `gate '${gate}': the open request by alice collided with other requests ${CONFLICT_ATTEMPTS} times; nothing was recorded`,
    );
    expect(table.failed.map((c) => c.command)).toEqual(
      Array(CONFLICT_ATTEMPTS).fill('TransactWriteItemsCommand'),
    );
    expect(await getGateRequest(deps.db, gate)).toBeUndefined();
    expect(await listGateAudit(deps.db, gate)).toEqual([]);
  });
});
