// Many at once: 50 concurrent reconciles of one delivery (one writes, 49 skip without touching the
// cluster), and 50 concurrent gate requests from different sources, each through its own client
// (the later recording time wins, none is lost, all are audited).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGateEvent } from '../../functions/core/gates/event.ts';
import { handleGateEvent, type GateRequestResult } from '../../functions/core/gates/requests.ts';
import type { ReconcileResult } from '../../functions/core/reconcile/reconcile.ts';
import { getGateRequest, listGateAudit } from '../../functions/core/store/gates.ts';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { tableClient } from '../../functions/core/store/table-client.ts';
import { writesSince } from '../support/audit.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { manualClock, registerGate } from '../support/gates.ts';
import { startKubeFaultProxy, type KubeFaultProxy } from '../support/kube-fault-proxy.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const RUNS = 50;

describe('50 concurrent reconciles of one delivery', () => {
  let proxy: KubeFaultProxy;
  beforeAll(async () => {
    proxy = await startKubeFaultProxy(bed);
  });
  afterAll(() => proxy.close());

  /**
   * Starts RUNS reconciles at once. The run that gets the lease is held at its first API request
   * until the others have finished, so all of them contend for the lease however slow the machine.
   */
  async function stampede(name: string): Promise<ReconcileResult[]> {
    let settled = 0;
    let allOthersDone: () => void = () => undefined;
    const othersDone = new Promise<void>((resolve) => (allOthersDone = resolve));
    proxy.plan({ beforeForward: () => othersDone });
    try {
      return await Promise.all(
        Array.from({ length: RUNS }, () =>
          run(name, { ...engineDeps(), connect: async () => proxy.kubeConfig() }).then((result) => {
            if (++settled === RUNS - 1) allOthersDone();
            return result;
          }),
        ),
      );
    } finally {
      proxy.plan({});
    }
  }

  it('exactly one writes; 49 skip and change nothing', async () => {
    const ns = uniqueName('stampede');
    const repository = uniqueName('concurrency/stampede');
    const name = uniqueName('stampede');
    await createNamespace(kc, ns);
    const cm = (n: string, v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\n  namespace: ${ns}\ndata:\n  v: "${v}"\n`;
    await registerDelivery(engineDeps(), bed, { name, repository, prune: true });

    await pushFiles(bed, repository, 'main', {
      'a.yaml': ['a', 'b', 'c', 'd', 'e'].map((n) => cm(n, '1')).join('---\n'),
    });
    let since = new Date().toISOString();
    let results = await stampede(name);
    expect(results.filter((r) => r.outcome === 'Succeeded')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'Skipped' && r.reason === 'LeaseHeld')).toHaveLength(RUNS - 1);
    expect(writesSince(bed, ns, since)).toHaveLength(5);

    // A new revision: two changed, one new, two pruned; still exactly one run writes each once.
    await pushFiles(bed, repository, 'main', {
      'a.yaml': [cm('a', '2'), cm('b', '2'), cm('c', '1'), cm('f', '1')].join('---\n'),
    });
    since = new Date().toISOString();
    results = await stampede(name);
    expect(results.filter((r) => r.outcome === 'Succeeded')).toHaveLength(1);
    expect(results.find((r) => r.outcome === 'Succeeded')?.changes).toEqual({
      created: 1,
      configured: 2,
      unchanged: 1,
      deleted: 2,
    });
    const writes = writesSince(bed, ns, since);
    expect(writes.filter((w) => w.startsWith('patch'))).toHaveLength(3);
    expect(writes.filter((w) => w.startsWith('delete'))).toHaveLength(2);
    expect(writes).toHaveLength(5);
    expect((await readInventory(engineDeps().db, name)).map((e) => e.id.split('_')[1]).sort()).toEqual([
      'a',
      'b',
      'c',
      'f',
    ]);
  });
});

describe('50 concurrent gate requests from mixed sources', () => {
  it('the latest recorded request wins, none is lost, every one is audited with its source', async () => {
    const clock = manualClock('2026-06-05T12:00:00Z');
    const deps = { ...engineDeps(), clock };
    const gate = uniqueName('gate');
    await registerGate(deps, { name: gate, default: 'open', window: '24h' });
    const sources = ['console', 'cli', 'api'] as const;
    const requests = Array.from({ length: RUNS }, (_, i) => ({
      gate,
      action: i % 3 === 0 ? 'open' : 'close',
      requestedAt: new Date(Date.parse('2026-06-05T11:00:00Z') + i * 997).toISOString(),
      requestedBy: `requester-${i}`,
      reason: `request ${i}`,
      source: sources[i % sources.length],
      ...(i % 5 === 0 && { window: '1h' }),
    }));
    const latest = requests.at(-1)!;
    const shuffled = [...requests].sort(() => Math.random() - 0.5);

    // Each request through its own DynamoDB client and clock, as separate gate function
    // invocations at those times would be.
    const results: GateRequestResult[] = await Promise.all(
      shuffled.map(({ requestedAt, ...request }) =>
        handleGateEvent(parseGateEvent(request), {
          db: tableClient(new DynamoDBClient({}), bed.dynamodb.table),
          clock: manualClock(requestedAt),
        }),
      ),
    );

    expect(await getGateRequest(deps.db, gate)).toMatchObject({
      action: latest.action,
      requestedAt: latest.requestedAt,
      requestedBy: latest.requestedBy,
      source: latest.source,
    });
    const accepted = results.filter((r) => r.outcome === 'accepted');
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(accepted.length + results.filter((r) => r.outcome === 'stale').length).toBe(RUNS);

    const audit = await listGateAudit(deps.db, gate, 100);
    expect(audit).toHaveLength(RUNS);
    expect(new Set(audit.map((r) => r.requestedBy))).toEqual(new Set(requests.map((r) => r.requestedBy)));
    expect(audit[0]).toMatchObject({ requestedAt: latest.requestedAt, outcome: 'accepted' });
    for (const request of requests) {
      expect(audit.find((r) => r.requestedBy === request.requestedBy)).toMatchObject({
        action: request.action,
        source: request.source,
        reason: request.reason,
      });
    }
    // Each answer is the state at its own recorder's clock; the latest one sees itself in force.
    expect(
      accepted
        .map((r) => r.status.lastRequest?.requestedAt)
        .filter((at) => at !== undefined)
        .sort()
        .at(-1),
    ).toBe(latest.requestedAt);
  });
});
