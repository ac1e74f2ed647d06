// Bad input of every kind: the reconcile fails with a status naming the problem, and nothing in
// the cluster or the inventory changes.
import { CoreV1Api, AppsV1Api } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { readInventory } from '../../../functions/core/store/inventory.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, rawRegistry, registerDelivery, run } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';
import { tgzOf, zeroFilesBomb, type FixtureEntry } from '../oci/tar-fixtures.ts';

const bed = testbed();
const deps = engineDeps();
const kc = bed.kubeConfig();
const ns = uniqueName('bad');
const repository = uniqueName('bad/app');
const name = uniqueName('bad');

const FLUX_LAYER = 'application/vnd.cncf.flux.content.v1.tar+gzip';

const configMap = (cmName: string, namespace = ns) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${cmName}
  namespace: ${namespace}
data:
  key: value
`;

/** Pushes a hand-made layer under tag `main`, with a descriptor that may lie about it. */
async function pushLayer(
  layer: Buffer,
  options: { mediaType?: string; sizeDelta?: number } = {},
): Promise<void> {
  const registry = rawRegistry(bed);
  const config = Buffer.from('{}');
  const configDigest = await registry.pushBlob(repository, config);
  const layerDigest = await registry.pushBlob(repository, layer);
  const manifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: {
      mediaType: 'application/vnd.cncf.flux.config.v1+json',
      digest: configDigest,
      size: config.length,
    },
    layers: [
      {
        mediaType: options.mediaType ?? FLUX_LAYER,
        digest: layerDigest,
        size: layer.length + (options.sizeDelta ?? 0),
      },
    ],
  };
  await registry.putManifest(repository, 'main', Buffer.from(JSON.stringify(manifest)), manifest.mediaType);
}

const pushTar = (entries: FixtureEntry[]) =>
  pushLayer(tgzOf([{ path: 'ok.yaml', body: configMap('ok') }, ...entries]));

async function clusterState() {
  const cms = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: ns });
  const deployments = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: ns });
  return [...cms.items, ...deployments.items]
    .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort();
}

interface BadCase {
  readonly name: string;
  readonly push: () => Promise<unknown>;
  readonly reason: string;
  readonly message: RegExp;
  readonly tag?: string;
}

const cases: BadCase[] = [
  {
    name: 'malformed YAML',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('a'),
        'deploy/broken.yaml': 'kind: ConfigMap\nmetadata: [unclosed\n',
      }),
    reason: 'BuildFailed',
    message: /broken\.yaml.*line \d+.*invalid YAML/,
  },
  {
    name: 'malformed JSON',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('a'),
        'deploy/cm.json': '{"apiVersion": "v1", "kind": ',
      }),
    reason: 'BuildFailed',
    message: /cm\.json.*invalid YAML/,
  },
  {
    name: 'a scalar document',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('a'),
        'deploy/text.yaml': 'just a string\n',
      }),
    reason: 'BuildFailed',
    message: /text\.yaml: a manifest must be an object/,
  },
  {
    name: 'missing kind',
    push: () =>
      pushFiles(bed, repository, 'main', { 'deploy/a.yaml': 'apiVersion: v1\nmetadata:\n  name: nokind\n' }),
    reason: 'ValidationFailed',
    message: /a\.yaml: \(no kind\)\/nokind: kind is missing/,
  },
  {
    name: 'missing apiVersion',
    push: () =>
      pushFiles(bed, repository, 'main', { 'deploy/a.yaml': 'kind: ConfigMap\nmetadata:\n  name: noapi\n' }),
    reason: 'ValidationFailed',
    message: /ConfigMap\/noapi: apiVersion is missing/,
  },
  {
    name: 'missing metadata.name',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n',
      }),
    reason: 'ValidationFailed',
    message: /ConfigMap\/\(no name\): metadata\.name is missing/,
  },
  {
    name: 'the same object twice',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('twin'),
        'deploy/b.yaml': configMap('twin'),
      }),
    reason: 'ValidationFailed',
    message: new RegExp(`b\\.yaml: ConfigMap/${ns}/twin is defined twice \\(also in deploy/a\\.yaml\\)`),
  },
  {
    name: 'an unknown kind',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('a'),
        'deploy/w.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n',
      }),
    reason: 'ValidationFailed',
    message: /w\.yaml: Widget\/default\/w|w\.yaml: Widget\/w: kind Widget is not served/,
  },
  {
    name: 'a namespace that does not exist',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('a'),
        'deploy/b.yaml': configMap('b', 'no-such-namespace'),
      }),
    reason: 'ValidationFailed',
    message: /b\.yaml: ConfigMap\/no-such-namespace\/b: namespaces "no-such-namespace" not found/,
  },
  {
    name: 'an object the API server rejects (Deployment without selector)',
    push: () =>
      pushFiles(bed, repository, 'main', {
        'deploy/a.yaml': configMap('a'),
        'deploy/d.yaml': `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ${ns}\nspec:\n  template:\n    spec:\n      containers: []\n`,
      }),
    reason: 'ValidationFailed',
    message: /d\.yaml: Deployment\/.*\/d: .*(selector|Required value)/,
  },
  {
    name: 'a path that is not in the artifact',
    push: async () => {
      await pushFiles(bed, repository, 'main', { 'elsewhere/a.yaml': configMap('a') });
    },
    reason: 'BuildFailed',
    message: /path 'deploy' does not exist in artifact main@sha256:/,
  },
  {
    name: 'an empty artifact (would prune everything)',
    push: () => pushFiles(bed, repository, 'main', { 'deploy/README.md': 'nothing here' }),
    reason: 'BuildFailed',
    message: /no objects under path 'deploy'; refusing to prune all 2 objects/,
  },
  {
    name: 'a tarball entry with ..',
    push: () => pushTar([{ path: 'deploy/../../etc/passwd.yaml', body: configMap('x') }]),
    reason: 'ArtifactFailed',
    message: /\.\./,
  },
  {
    name: 'an absolute path in the tarball',
    push: () => pushTar([{ path: '/etc/evil.yaml', body: configMap('x') }]),
    reason: 'ArtifactFailed',
    message: /absolute/i,
  },
  {
    name: 'a symlink in the tarball',
    push: () => pushTar([{ path: 'deploy/link.yaml', type: 'SymbolicLink', linkpath: '/etc/passwd' }]),
    reason: 'ArtifactFailed',
    message: /link/i,
  },
  {
    name: 'a hard link in the tarball',
    push: () => pushTar([{ path: 'deploy/hard.yaml', type: 'Link', linkpath: 'ok.yaml' }]),
    reason: 'ArtifactFailed',
    message: /link/i,
  },
  {
    name: 'a device file in the tarball',
    push: () => pushTar([{ path: 'deploy/dev', type: 'CharacterDevice' }]),
    reason: 'ArtifactFailed',
    message: /device|CharacterDevice/i,
  },
  {
    name: 'a gzip bomb (40 files of 30 MiB of zeros)',
    push: async () => pushLayer(await zeroFilesBomb(40, 30, (i) => `deploy/zeros-${i}.yaml`)),
    reason: 'ArtifactFailed',
    message: /limit|exceed/i,
  },
  {
    name: 'a layer with the wrong media type',
    push: () =>
      pushLayer(tgzOf([{ path: 'deploy/a.yaml', body: configMap('a') }]), {
        mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
      }),
    reason: 'ArtifactFailed',
    message: /application\/vnd\.oci\.image\.layer\.v1\.tar\+gzip/,
  },
  {
    name: 'a layer whose size does not match its descriptor',
    push: () => pushLayer(tgzOf([{ path: 'deploy/a.yaml', body: configMap('a') }]), { sizeDelta: 7 }),
    reason: 'ArtifactFailed',
    message: /served \d+ bytes, the descriptor says \d+/,
  },
  {
    name: 'a tag that does not exist',
    tag: 'no-such-tag',
    push: async () => undefined,
    reason: 'ArtifactFailed',
    message: /no-such-tag/,
  },
];

describe('bad input changes nothing and the status says why', () => {
  let good: string[];
  let goodInventory: unknown;
  let goodRevision: string | undefined;

  beforeAll(async () => {
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'deploy/app.yaml': `${configMap('app')}---\n${configMap('settings')}`,
    });
    await registerDelivery(deps, bed, { name, repository, prune: true, path: 'deploy' });
    const first = await run(name, deps);
    expect(first.outcome).toBe('Succeeded');
    goodRevision = first.revision;
    good = await clusterState();
    goodInventory = await readInventory(deps.db, name);
  });

  it.each(cases)('$name', async (badCase) => {
    await badCase.push();
    if (badCase.tag)
      await registerDelivery(deps, bed, { name, repository, prune: true, path: 'deploy', tag: badCase.tag });
    try {
      const result = await run(name, deps);
      expect(result).toMatchObject({
        outcome: 'Failed',
        reason: badCase.reason,
        message: expect.stringMatching(badCase.message),
      });
      const status = await getStatus(deps.db, name);
      expect(status).toMatchObject({
        ready: false,
        reason: badCase.reason,
        lastAppliedRevision: goodRevision,
      });
      expect(status?.message).toBe(result.message);
      expect(await clusterState()).toEqual(good);
      expect(await readInventory(deps.db, name)).toEqual(goodInventory);
    } finally {
      if (badCase.tag) await registerDelivery(deps, bed, { name, repository, prune: true, path: 'deploy' });
    }
  });
});
