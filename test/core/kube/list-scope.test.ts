// How a reconcile lists its own objects: in their namespace when all of a kind's objects are in one
// (a label selector is applied after the API server reads every object of the kind, so a
// cluster-wide list reads the whole cluster's), cluster-wide when they span more. On the real API
// server, read from its audit log.
import { describe, expect, it } from 'vitest';
import { NAMESPACED_LISTS_UP_TO } from '../../../functions/core/kube/apply.ts';
import { listsSince } from '../../support/audit.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();

const configMap = (name: string, ns: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  k: v\n`;

async function deliveryIn(namespaces: readonly string[]) {
  for (const ns of namespaces) await createNamespace(bed.kubeConfig(), ns);
  const name = uniqueName('scope');
  const repository = uniqueName('scope/app');
  await pushFiles(bed, repository, 'main', {
    'cms.yaml': namespaces.map((ns) => configMap('app', ns)).join('---\n'),
  });
  await registerDelivery(deps, bed, { name, repository });
  return name;
}

describe('listing what a delivery owns', () => {
  it('a kind in one namespace is listed in that namespace only, on every run', async () => {
    const ns = uniqueName('scope');
    const name = await deliveryIn([ns]);
    const since = new Date().toISOString();
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const lists = listsSince(bed, name, since);
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.filter((path) => path.endsWith('/configmaps'))).toEqual(
      expect.arrayContaining([`/api/v1/namespaces/${ns}/configmaps`]),
    );
    expect(lists).not.toContain('/api/v1/configmaps');
  });

  it(`a kind spread over ${NAMESPACED_LISTS_UP_TO + 1} namespaces is listed once, cluster-wide (never more requests than that)`, async () => {
    const namespaces = Array.from({ length: NAMESPACED_LISTS_UP_TO + 1 }, () => uniqueName('spread'));
    const name = await deliveryIn(namespaces);
    const since = new Date().toISOString();
    expect((await run(name, deps)).outcome).toBe('Succeeded');
    const configMapLists = listsSince(bed, name, since).filter((path) => path.endsWith('/configmaps'));
    expect(configMapLists).toContain('/api/v1/configmaps');
    expect(configMapLists.filter((path) => path.includes('/namespaces/'))).toEqual([]);
  });
});
