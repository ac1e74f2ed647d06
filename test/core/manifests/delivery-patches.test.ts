// The delivery's patches and images (Flux's .spec.patches / .spec.images), applied by real
// kustomize after the build, then substitution and common metadata.
import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../../functions/core/config/index.ts';
import { SluiceError } from '../../../functions/core/errors.ts';
import { buildManifests } from '../../../functions/core/manifests/build.ts';
import {
  artifact,
  build,
  buildError,
  byName,
  configMap,
  deliveryWith,
  deployment,
  kubectl,
} from './fixtures.ts';

const plain = {
  'deploy/web.yaml': deployment('web', 'nginx:1.27'),
  'deploy/api.yaml': deployment('api', 'ghcr.io/org/api:2.0'),
  'deploy/settings.yaml': configMap('settings', { mode: 'safe' }, '  labels:\n    tier: config\n'),
};
const overlay = {
  'base/kustomization.yaml': 'resources: [web.yaml, settings.yaml]\n',
  'base/web.yaml': deployment('web', 'nginx:1.27'),
  'base/settings.yaml': configMap('settings', { mode: 'safe' }),
  'prod/kustomization.yaml': 'namespace: prod\nresources: [../base]\n',
};
const replicas = (n: number | string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${n}\n`;

type Containers = { name: string; image: string }[];
const containersOf = (object: Record<string, unknown> | undefined) =>
  (object as { spec: { template: { spec: { containers: Containers } } } }).spec.template.spec.containers;

describe('delivery patches', () => {
  it('applies a strategic merge patch without a target to the object it names', async () => {
    const objects = byName(await build(plain, { path: 'deploy', patches: [{ patch: replicas(3) }] }));
    expect(objects['Deployment/web']).toMatchObject({ spec: { replicas: 3 } });
    expect(objects['Deployment/api']).toMatchObject({ spec: { replicas: 1 } });
  });

  it('applies a targeted strategic merge patch to every match, merging containers by name', async () => {
    const patch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: any
spec:
  template:
    spec:
      containers:
        - name: sidecar
          image: busybox:1.37
`;
    const objects = byName(
      await build(plain, { path: 'deploy', patches: [{ patch, target: { kind: 'Deployment' } }] }),
    );
    // kustomize's merge puts the patched container first; order of containers does not matter.
    const byContainer = (object: Record<string, unknown> | undefined) =>
      Object.fromEntries(containersOf(object).map((c) => [c.name, c.image]));
    expect(byContainer(objects['Deployment/web'])).toEqual({ web: 'nginx:1.27', sidecar: 'busybox:1.37' });
    expect(byContainer(objects['Deployment/api'])).toEqual({
      api: 'ghcr.io/org/api:2.0',
      sidecar: 'busybox:1.37',
    });
  });

  it('applies JSON6902 patches written as YAML or JSON, selected by name pattern and label', async () => {
    const objects = byName(
      await build(plain, {
        path: 'deploy',
        patches: [
          {
            patch:
              '- op: replace\n  path: /spec/replicas\n  value: 5\n- op: add\n  path: /metadata/annotations\n  value: { team: web }\n',
            target: { kind: 'Deployment', name: 'w.b' },
          },
          {
            patch: '[{"op": "replace", "path": "/data/mode", "value": "fast"}]',
            target: { labelSelector: 'tier=config' },
          },
        ],
      }),
    );
    expect(objects['Deployment/web']).toMatchObject({
      spec: { replicas: 5 },
      metadata: { annotations: { team: 'web' } },
    });
    expect(objects['Deployment/api']).toMatchObject({ spec: { replicas: 1 } });
    expect(objects['Deployment/api']?.metadata?.annotations).toBeUndefined();
    expect(objects['ConfigMap/settings']?.data).toEqual({ mode: 'fast' });
  });

  it('applies patches after the kustomize build, in order, each seeing the ones before', async () => {
    const objects = byName(
      await build(overlay, {
        path: 'prod',
        patches: [
          {
            patch: '- op: add\n  path: /metadata/labels\n  value: { scale: "yes" }\n',
            target: { kind: 'Deployment', namespace: 'prod' },
          },
          { patch: replicas(4).replace('name: web', 'name: x'), target: { labelSelector: 'scale=yes' } },
        ],
      }),
    );
    expect(objects['Deployment/web']).toMatchObject({
      metadata: { namespace: 'prod', labels: { scale: 'yes' } },
      spec: { replicas: 4 },
    });
  });

  it('deletes objects with $patch: delete, which counts as matching', async () => {
    const patch = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: any\n$patch: delete\n';
    const built = await build(plain, { path: 'deploy', patches: [{ patch, target: { kind: 'ConfigMap' } }] });
    expect(Object.keys(byName(built)).sort()).toEqual(['Deployment/api', 'Deployment/web']);
  });

  it('does not mistake a later patch that replaces all annotations for a target that matched nothing', async () => {
    const built = await build(plain, {
      path: 'deploy',
      patches: [
        { patch: replicas(2), target: { kind: 'Deployment', name: 'web' } },
        {
          patch: '- op: add\n  path: /metadata/annotations\n  value: { only: this }\n',
          target: { kind: 'Deployment' },
        },
      ],
    });
    const web = byName(built)['Deployment/web'];
    expect(web).toMatchObject({ spec: { replicas: 2 } });
    expect(web?.metadata?.annotations).toEqual({ only: 'this' });
  });

  it('leaves no trace of its own bookkeeping and keeps each object named by its file', async () => {
    const built = await build(plain, {
      path: 'deploy',
      patches: [
        { patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n', target: { kind: 'Deployment' } },
      ],
    });
    for (const { object } of built) expect(object.metadata?.annotations).toBeUndefined();
    expect(built.map((m) => m.origin).sort()).toEqual([
      'deploy/api.yaml',
      'deploy/settings.yaml',
      'deploy/web.yaml',
    ]);
  });

  it('fails naming the patch whose target matches no object', async () => {
    const error = await buildError(plain, {
      path: 'deploy',
      patches: [
        { patch: replicas(2), target: { kind: 'Deployment' } },
        { patch: replicas(3), target: { kind: 'Deploymnt', name: 'web' } },
        { patch: '- op: remove\n  path: /data\n', target: { kind: 'ConfigMap', labelSelector: 'tier=nope' } },
      ],
    });
    expect(error).toMatchObject({
      reason: 'BuildFailed',
      message:
        'patches[1].target (kind: Deploymnt, name: web) matches no object of the build; ' +
        'patches[2].target (kind: ConfigMap, labelSelector: tier=nope) matches no object of the build',
    });
  });

  it('fails naming the patch when its target only matched an object deleted before it', async () => {
    const error = await buildError(plain, {
      path: 'deploy',
      patches: [
        {
          patch: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n$patch: delete\n',
          target: { kind: 'ConfigMap' },
        },
        { patch: '- op: remove\n  path: /data\n', target: { kind: 'ConfigMap' } },
      ],
    });
    expect(error.message).toBe('patches[1].target (kind: ConfigMap) matches no object of the build');
  });

  it.each([
    [
      'a strategic merge patch naming a missing object',
      { patch: replicas(2).replace('name: web', 'name: nope') },
      'patches[1]: no resource matches strategic merge patch "Deployment.v1.apps/nope.[noNs]"',
    ],
    [
      'an operation on a missing path',
      { patch: '- op: replace\n  path: /spec/nope/x\n  value: 1\n', target: { kind: 'Deployment' } },
      'patches[1]: replace operation does not apply: doc is missing path: /spec/nope/x: missing value',
    ],
    [
      'a failed test operation',
      { patch: '- op: test\n  path: /data/mode\n  value: fast\n', target: { kind: 'ConfigMap' } },
      'patches[1]: testing value /data/mode failed: test failed',
    ],
    [
      'a bad label selector',
      { patch: replicas(2), target: { labelSelector: 'app in (web' } },
      'patches[1]: unable to find patch target "[noKind].[noVer].[noGrp]/[noName].[noNs]:a=:l=app in (web" in `resources`: unable to parse requirement',
    ],
  ])('fails naming the patch kustomize cannot apply: %s', async (_, failing, message) => {
    const error = await buildError(plain, {
      path: 'deploy',
      patches: [{ patch: replicas(2) }, failing],
    });
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toContain(message);
  });

  it('refuses a malformed patch or image of a delivery stored without validation, naming the field', async () => {
    const delivery: Delivery = {
      ...deliveryWith({ path: 'deploy' }),
      patches: [
        { patch: 'kind: [Deployment' },
        { patch: '- op: remove\n  path: /data\n' },
        { patch: 'spec:\n  replicas: 2\n', target: { kind: 'Deployment' } },
      ],
      images: [{ name: '', newTag: '1' }, { name: 'nginx' }],
    };
    const error = await buildManifests(artifact(plain), delivery, 'rev', { kubectl: kubectl() }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SluiceError);
    expect((error as SluiceError).message.split('; ')).toEqual([
      'patches[0].patch: is not valid YAML at line 1, column 18: Flow sequence in block collection must be sufficiently indented and end with a ]',
      'patches[1].target: is required for a JSON6902 patch (a list of operations): it says which objects to patch',
      'patches[2].patch: a strategic merge patch needs kind and metadata.name: kustomize needs them to read the patch, even though the target picks the objects (any name will do)',
      'images[0]: name is missing',
      'images[1]: set at least one of newName, newTag and digest',
    ]);
  });

  it('applies patches to a directory without a kustomization too', async () => {
    const built = await build(
      { 'cm.yaml': configMap('a', { k: 'v' }) },
      {
        patches: [{ patch: '- op: add\n  path: /data/extra\n  value: "1"\n', target: { kind: 'ConfigMap' } }],
      },
    );
    expect(built.map((m) => [m.origin, m.object.data])).toEqual([['cm.yaml', { k: 'v', extra: '1' }]]);
  });
});

describe('delivery images', () => {
  const DIGEST = `sha256:${'d'.repeat(64)}`;

  it.each([
    ['newTag', { name: 'nginx', newTag: '1.27.3' }, 'nginx:1.27.3'],
    ['newName', { name: 'nginx', newName: 'ghcr.io/mirror/nginx' }, 'ghcr.io/mirror/nginx:1.27'],
    ['digest', { name: 'nginx', digest: DIGEST }, `nginx@${DIGEST}`],
    [
      'all three',
      { name: 'nginx', newName: 'ghcr.io/mirror/nginx', newTag: '1.28', digest: DIGEST },
      `ghcr.io/mirror/nginx:1.28@${DIGEST}`,
    ],
  ])('sets %s on the matching containers only', async (_, image, expected) => {
    const objects = byName(await build(plain, { path: 'deploy', images: [image] }));
    expect(containersOf(objects['Deployment/web'])).toEqual([
      { name: 'web', image: expected },
      { name: 'sidecar', image: 'busybox:1.36' },
    ]);
    expect(containersOf(objects['Deployment/api'])[0]?.image).toBe('ghcr.io/org/api:2.0');
  });

  it('overrides images after a kustomize build, and ignores an image no container uses, as Flux does', async () => {
    const objects = byName(
      await build(overlay, {
        path: 'prod',
        images: [
          { name: 'busybox', newTag: '1.37' },
          { name: 'postgres', newTag: '17' },
        ],
      }),
    );
    expect(containersOf(objects['Deployment/web'])).toEqual([
      { name: 'web', image: 'nginx:1.27' },
      { name: 'sidecar', image: 'busybox:1.37' },
    ]);
  });
});

describe('order: build, patches and images, substitution, common metadata', () => {
  it('substitutes variables that patches and images brought in, keeping types', async () => {
    const objects = byName(
      await build(plain, {
        path: 'deploy',
        patches: [{ patch: replicas('${replicas}') }],
        images: [{ name: 'nginx', newTag: '${nginx_version}' }],
        postBuild: { substitute: { replicas: '7', nginx_version: '1.27.4' } },
      }),
    );
    expect(objects['Deployment/web']).toMatchObject({ spec: { replicas: 7 } });
    expect(containersOf(objects['Deployment/web'])[0]?.image).toBe('nginx:1.27.4');
  });

  it('names the file and the variable when a patch brings in an undefined one', async () => {
    const error = await buildError(plain, {
      path: 'deploy',
      patches: [{ patch: replicas('${replicas}') }],
      postBuild: { substitute: { other: 'x' } },
    });
    expect(error.reason).toBe('ValidationFailed');
    expect(error.message).toMatch(/^deploy\/web\.yaml: Deployment\/web: variable "replicas" is not defined/);
  });

  it('does not name an undefined variable of a Secret: it may be part of a (decrypted) value', async () => {
    const secret =
      'apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: "hunter${TOKEN_PART}2"}\n';
    const error = await buildError(
      { 'deploy/db.yaml': secret },
      { path: 'deploy', postBuild: { substitute: { other: 'x' } } },
    );
    expect(error.reason).toBe('ValidationFailed');
    expect(error.message).toMatch(/^deploy\/db\.yaml: Secret\/db: a variable is not defined \(not named/);
    expect(error.message).not.toContain('TOKEN_PART');
  });

  it('names the file of a kustomize-built object with an undefined variable', async () => {
    const error = await buildError(
      {
        'base/kustomization.yaml': 'resources: [pool.yaml]\n',
        'base/pool.yaml': configMap('pool', { cluster: '${cluster_name}' }),
        'prod/kustomization.yaml': 'resources: [../base]\n',
      },
      { path: 'prod', postBuild: { substitute: { other: 'x' } } },
    );
    expect(error.message).toMatch(
      /^base\/pool\.yaml: ConfigMap\/pool: variable "cluster_name" is not defined/,
    );
  });

  it('lets common metadata win over a label a patch set', async () => {
    const objects = byName(
      await build(plain, {
        path: 'deploy',
        patches: [
          {
            patch: '- op: add\n  path: /metadata/labels/team\n  value: patch\n',
            target: { kind: 'ConfigMap' },
          },
        ],
        commonMetadata: { labels: { team: 'delivery' } },
      }),
    );
    expect(objects['ConfigMap/settings']?.metadata?.labels).toEqual({ tier: 'config', team: 'delivery' });
  });
});
