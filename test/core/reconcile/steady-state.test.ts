// A steady-state run (nothing changed, the delivery as the last run left it) records its status
// but no event, in the table or on the bus: at a 5-minute interval those events were most of a
// delivery's table writes. A run that changes anything, drift correction included, records one.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { listEvents, type ReconcileEvent } from '../../../functions/core/store/events.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { listsSince, requestsSince } from '../../support/audit.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const configMap = (ns: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: steady\n  namespace: ${ns}\ndata:\n  k: ${value}\n`;

describe('steady state', () => {
  it('reads the Namespaces it declares and owns with one list a run, not one request each', async () => {
    const [repository, name] = [uniqueName('steady/ns'), uniqueName('steady-ns')];
    const namespaces = [1, 2, 3].map((i) => `${name}-${i}`);
    const deps = engineDeps();
    const files = Object.fromEntries(
      namespaces.map((ns) => [
        `${ns}.yaml`,
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n---\n${configMap(ns, 'one')}`,
      ]),
    );
    await pushFiles(bed, repository, 'main', files);
    await registerDelivery(deps, bed, { name, repository });
    expect((await run(name, deps)).changes).toMatchObject({ created: 6 });
    const since = new Date().toISOString();
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const reads = requestsSince(bed, '/api/v1/namespaces', since).filter((r) =>
      namespaces.some((ns) => r === `get /api/v1/namespaces/${ns}`),
    );
    expect(reads).toEqual([]);
    // Settling the objects lists the delivery's Namespaces; the comparison takes that list.
    expect(listsSince(bed, name, since).filter((path) => path === '/api/v1/namespaces')).toHaveLength(1);
  });

  it('an unchanged run records no event; a drift correction and a new revision each record one', async () => {
    const [ns, repository, name] = [uniqueName('steady'), uniqueName('steady/app'), uniqueName('steady')];
    await createNamespace(bed.kubeConfig(), ns);
    const published: ReconcileEvent[] = [];
    const deps = {
      ...engineDeps(),
      events: { publish: async (e: ReconcileEvent) => void published.push(e) },
    };
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, 'one') });
    await registerDelivery(deps, bed, { name, repository });
    expect((await run(name, deps)).changes).toMatchObject({ created: 1 });
    const first = await getStatus(deps.db, name);

    expect((await run(name, deps)).outcome).toBe('Succeeded');
    expect(await listEvents(deps.db, name)).toHaveLength(1);
    expect(published).toHaveLength(1);
    expect(Date.parse((await getStatus(deps.db, name))!.lastReconcileAt)).toBeGreaterThan(
      Date.parse(first!.lastReconcileAt),
    );

    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    await core.patchNamespacedConfigMap({
      name: 'steady',
      namespace: ns,
      body: [{ op: 'replace', path: '/data/k', value: 'drifted' }],
    });
    expect((await run(name, deps)).changes).toMatchObject({ configured: 1 });
    await pushFiles(bed, repository, 'main', { 'cm.yaml': configMap(ns, 'two') });
    expect((await run(name, deps)).changes).toMatchObject({ configured: 1 });
    expect(await listEvents(deps.db, name)).toHaveLength(3);
    expect(published.map((e) => e.outcome)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
  });
});
