// prepareObjects on the real API server: it lets the event loop turn between objects (hashing the
// largest build the limits accept took a second in one go), and what it returns does not depend
// on how often it does.
import { describe, expect, it } from 'vitest';
import { KubeClient } from '../../../functions/core/kube/client.ts';
import { prepareObjects } from '../../../functions/core/kube/prepare.ts';
import type { Manifest } from '../../../functions/core/manifests/objects.ts';
import { pacer } from '../../../functions/core/pacer.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();

const manifests: Manifest[] = Array.from({ length: 300 }, (_, i) => ({
  object: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${String(i).padStart(3, '0')}`, namespace: 'default' },
    data: { value: 'x'.repeat(2048) },
  },
  origin: `deploy/cms.yaml#${i}`,
}));

describe('prepareObjects', () => {
  it('asks its pacer for a turn of the event loop before each object, with the same result', async () => {
    const kube = new KubeClient(bed.kubeConfig());
    try {
      let looks = 0;
      const counting = { pause: () => ((looks += 1), Promise.resolve()) };
      const paced = await prepareObjects({ kube, owner: 'prepare-test', manifests, pacer: counting });
      expect(looks).toBe(manifests.length);
      // Every call a turn (sliceMs 0), and the default pace: the same objects, hashes and order.
      const everyCall = await prepareObjects({ kube, owner: 'prepare-test', manifests, pacer: pacer(0) });
      const byDefault = await prepareObjects({ kube, owner: 'prepare-test', manifests });
      expect(everyCall).toEqual(paced);
      expect(byDefault).toEqual(paced);
      expect(paced.map((d) => d.object.metadata?.name)).toEqual(
        manifests.map((m) => m.object.metadata?.name),
      );
    } finally {
      kube.close();
    }
  });
});
