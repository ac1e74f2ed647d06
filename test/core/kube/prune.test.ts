// pruneEntries on the real API server, for kinds read object by object and kinds listed at once.
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { pruneEntries } from '../../../functions/core/kube/prune.ts';
import { entryFor } from '../../../functions/core/manifests/inventory.ts';
import { OWNER_LABEL, PRUNE_ANNOTATION } from '../../../functions/core/manifests/objects.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

const configMap = (
  name: string,
  namespace: string,
  metadata: Partial<KubernetesObject['metadata']> = {},
) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, ...metadata },
  data: { name },
});

describe('pruneEntries', () => {
  it.each([
    ['read one by one', 3],
    ['listed by kind', 25],
  ])('deletes what is ours and keeps the rest, %s', async (_how, count) => {
    const kube = new KubeClient(bed.kubeConfig());
    const ns = uniqueName('prune');
    const delivery = uniqueName('d');
    await createNamespace(bed.kubeConfig(), ns);
    const ours = { labels: { [OWNER_LABEL]: delivery } };
    const objects = [
      configMap('relabelled', ns, { labels: { [OWNER_LABEL]: 'someone-else' } }),
      configMap('unlabelled', ns),
      configMap('kept', ns, { ...ours, annotations: { [PRUNE_ANNOTATION]: 'disabled' } }),
      configMap('deleted-by-hand', ns, ours),
      ...Array.from({ length: count }, (_, i) => configMap(`stale-${i}`, ns, ours)),
    ];
    for (const object of objects) await kube.apply(object);
    await kube.delete(objects[3]!);
    const gone = {
      apiVersion: `${uniqueName('gone')}.sluice.test/v1`,
      kind: 'Thing',
      metadata: { name: 't', namespace: ns },
    };

    const result = await pruneEntries({ kube, owner: delivery, entries: [...objects, gone].map(entryFor) });

    const id = (name: string) => entryFor(configMap(name, ns)).id;
    expect(result.skipped.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: id('kept'), reason: `annotated ${PRUNE_ANNOTATION}: disabled` },
      { id: id('relabelled'), reason: "owned by delivery 'someone-else'" },
      { id: id('unlabelled'), reason: `has no ${OWNER_LABEL} label` },
    ]);
    expect(result.deleted.sort()).toEqual(
      [id('deleted-by-hand'), ...Array.from({ length: count }, (_, i) => id(`stale-${i}`))].sort(),
    );
    // Its kind is served in no version and defined by nothing: gone with it, not deleted by us.
    expect(result.goneWithKind).toEqual([entryFor(gone).id]);
    const left = await kube.list('v1', 'ConfigMap', '', ns);
    expect(
      left
        .map((o) => o.metadata?.name)
        .filter((name) => name !== 'kube-root-ca.crt')
        .sort(),
    ).toEqual(['kept', 'relabelled', 'unlabelled']);
  });
});
