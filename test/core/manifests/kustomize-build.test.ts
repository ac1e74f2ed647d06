// The build step with a kustomization: real `kubectl kustomize`, self-containment checks, origins.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, buildError, byName, configMap, deployment } from './fixtures.ts';

const release = {
  'release/kustomization.yaml': `resources: [pool.yaml, web.yaml]
configMapGenerator:
  - name: release-info
    literals: [release=v21]
`,
  'release/pool.yaml': configMap('pool', { replicas: '3', kubernetesVersion: 'v1.32.3' }),
  'release/web.yaml': deployment('web', 'nginx:1.27'),
};
const prodOverlay = {
  'clusters/prod/kustomization.yaml': `namespace: prod
resources: [../../release]
patches:
  - path: pool.yaml
images:
  - name: nginx
    newTag: 1.27.3
`,
  'clusters/prod/pool.yaml': configMap('pool', { replicas: '6' }),
};

describe('kustomize builds', () => {
  it('builds an overlay over a base in the artifact, naming each object by the file it came from', async () => {
    const built = await build(
      { ...release, ...prodOverlay, 'README.md': '# not a manifest' },
      { path: 'clusters/prod' },
    );
    const objects = byName(built);
    expect(Object.keys(objects).sort()).toEqual([
      'ConfigMap/pool',
      'ConfigMap/release-info-h4664ff74k',
      'Deployment/web',
    ]);
    expect(objects['ConfigMap/pool']).toMatchObject({
      metadata: { name: 'pool', namespace: 'prod' },
      data: { replicas: '6', kubernetesVersion: 'v1.32.3' },
    });
    expect(objects['Deployment/web']).toMatchObject({
      spec: { template: { spec: { containers: [{ image: 'nginx:1.27.3' }, { image: 'busybox:1.36' }] } } },
    });
    expect(Object.fromEntries(built.map((m) => [m.object.metadata?.name, m.origin]))).toEqual({
      pool: 'release/pool.yaml',
      web: 'release/web.yaml',
      'release-info-h4664ff74k': 'release/kustomization.yaml (ConfigMapGenerator)',
    });
    // The origin annotation only served the names above.
    for (const { object } of built) expect(object.metadata?.annotations).toBeUndefined();
  });

  it('builds the base on its own, and a kustomization at the artifact root', async () => {
    const base = byName(await build(release, { path: 'release' }));
    expect(base['ConfigMap/pool']?.data).toEqual({ replicas: '3', kubernetesVersion: 'v1.32.3' });
    expect(base['ConfigMap/pool']?.metadata?.namespace).toBeUndefined();

    const root = await build({
      'kustomization.yaml': 'resources: [cm.yaml]\n',
      'cm.yaml': configMap('a', { k: 'v' }),
    });
    expect(root.map((m) => [m.origin, m.object.metadata?.name])).toEqual([['cm.yaml', 'a']]);
  });

  it.each(['kustomization.yml', 'Kustomization'])('recognises %s', async (file) => {
    const built = await build(
      {
        [`app/${file}`]: 'namePrefix: x-\nresources: [cm.yaml]\n',
        'app/cm.yaml': configMap('a', { k: 'v' }),
      },
      { path: 'app' },
    );
    expect(built.map((m) => m.object.metadata?.name)).toEqual(['x-a']);
  });

  it('keeps the origin annotations when the artifact asks for them, and honours the root sortOptions', async () => {
    const built = await build(
      {
        'app/kustomization.yaml': `resources: [cm.yaml, ns.yaml]
buildMetadata: [originAnnotations]
`,
        'app/cm.yaml': configMap('a', { k: 'v' }),
        'app/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n',
      },
      { path: 'app' },
    );
    expect(byName(built)['ConfigMap/a']?.metadata?.annotations).toEqual({
      'config.kubernetes.io/origin': 'path: cm.yaml\n',
    });

    const files = {
      'app/kustomization.yaml': 'resources: [cm.yaml, ns.yaml]\nsortOptions:\n  order: fifo\n',
      'app/cm.yaml': configMap('a', { k: 'v' }),
      'app/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n',
    };
    expect((await build(files, { path: 'app' })).map((m) => m.object.kind)).toEqual([
      'ConfigMap',
      'Namespace',
    ]);
    files['app/kustomization.yaml'] = 'resources: [cm.yaml, ns.yaml]\n';
    expect((await build(files, { path: 'app' })).map((m) => m.object.kind)).toEqual([
      'Namespace',
      'ConfigMap',
    ]);
  });

  it('without a kustomization, reads every YAML and JSON file under the path, as before', async () => {
    const built = await build(
      {
        'deploy/b.yaml': `${configMap('b1', { k: '1' })}---\n${configMap('b2', { k: '2' })}`,
        'deploy/a.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }),
        'deploy/nested/c.yml': configMap('c', { k: '3' }),
        'deploy/notes.txt': 'not read',
        'other/d.yaml': configMap('d', { k: '4' }),
      },
      { path: 'deploy' },
    );
    expect(built.map((m) => [m.origin, m.object.metadata?.name])).toEqual([
      ['deploy/a.json', 'a'],
      ['deploy/b.yaml', 'b1'],
      ['deploy/b.yaml#1', 'b2'],
      ['deploy/nested/c.yml', 'c'],
    ]);
  });
});

describe('a self-contained artifact', () => {
  const REMOTE_ADVICE = 'The artifact must be self-contained: vendor remote bases into it';

  it.each([
    [
      'resources',
      'resources:\n  - https://github.com/org/fleet//release?ref=v21\n',
      'resources[0] "https://github.com/org/fleet//release?ref=v21"',
    ],
    [
      'resources',
      'resources:\n  - github.com/org/fleet/release\n',
      'resources[0] "github.com/org/fleet/release"',
    ],
    [
      'resources',
      'resources:\n  - git::https://example.com/fleet.git//release\n',
      'resources[0] "git::https://example.com/fleet.git//release"',
    ],
    [
      'resources',
      'resources:\n  - ssh://git@github.com/org/fleet.git\n',
      'resources[0] "ssh://git@github.com/org/fleet.git"',
    ],
    [
      'resources',
      'resources:\n  - git@github.com:org/fleet.git/release\n',
      'resources[0] "git@github.com:org/fleet.git/release"',
    ],
    [
      'resources',
      'resources:\n  - http://example.com/pool.yaml\n',
      'resources[0] "http://example.com/pool.yaml"',
    ],
    ['resources', 'resources:\n  - ../release?ref=main\n', 'resources[0] "../release?ref=main"'],
    ['bases', 'bases:\n  - gitlab.com/org/fleet/release\n', 'bases[0] "gitlab.com/org/fleet/release"'],
    [
      'components',
      'components:\n  - https://github.com/org/components/ha\n',
      'components[0] "https://github.com/org/components/ha"',
    ],
    [
      'patches',
      'patches:\n  - path: https://example.com/patch.yaml\n',
      'patches[0].path "https://example.com/patch.yaml"',
    ],
    [
      'configMapGenerator',
      'configMapGenerator:\n  - name: x\n    files: [conf=https://example.com/x.conf]\n',
      'configMapGenerator[0].files[0] "https://example.com/x.conf"',
    ],
    [
      'openapi',
      'openapi:\n  path: https://example.com/schema.json\n',
      'openapi.path "https://example.com/schema.json"',
    ],
    [
      'resources',
      'resources:\n  - "http://example.com/x.yaml?v={"\n',
      'resources[0] "http://example.com/x.yaml?v={"',
    ],
    ['resources', 'resources:\n  - github.com:org/repo\n', 'resources[0] "github.com:org/repo"'],
    ['resources', 'resources:\n  - //example.com/x.yaml\n', 'resources[0] "//example.com/x.yaml"'],
    [
      'generators (inline, as text)',
      'generators:\n  - |\n    apiVersion: builtin\n    kind: ConfigMapGenerator\n    metadata: {name: x}\n    files: [k=http://example.com/x]\n',
      'generators[0].files[0] "http://example.com/x"',
    ],
    [
      'transformers (inline, as text)',
      'transformers:\n  - |\n    apiVersion: builtin\n    kind: PatchTransformer\n    metadata: {name: x}\n    path: https://example.com/p.yaml\n',
      'transformers[0].path "https://example.com/p.yaml"',
    ],
    [
      'Resources (keys are matched as kustomize matches them)',
      'Resources:\n  - http://127.0.0.1/x.yaml\n',
      'Resources[0] "http://127.0.0.1/x.yaml"',
    ],
    ['Bases', 'Bases:\n  - https://example.com/b.yaml\n', 'Bases[0] "https://example.com/b.yaml"'],
    ['Components', 'COMPONENTS:\n  - https://example.com/c\n', 'COMPONENTS[0] "https://example.com/c"'],
    [
      'OpenAPI',
      'OpenAPI:\n  path: https://example.com/s.json\n',
      'OpenAPI.path "https://example.com/s.json"',
    ],
    [
      'a nested key',
      'patches:\n  - Path: https://example.com/p.yaml\n',
      'patches[0].Path "https://example.com/p.yaml"',
    ],
    [
      'a key folded by Unicode (U+017F)',
      're\u017fources:\n  - https://example.com/r.yaml\n',
      're\u017fources[0] "https://example.com/r.yaml"',
    ],
    [
      'keys differing only in case (the last in byte order is the one kustomize reads)',
      'resources:\n  - https://example.com/r.yaml\nResources:\n  - ../release\n',
      'resources[0] "https://example.com/r.yaml"',
    ],
    [
      'a plugin config file whose keys differ in case',
      'transformers: [t.yaml]\n',
      'PATH "https://example.com/p.yaml"',
    ],
    [
      'secretGenerator',
      'secretGenerator:\n  - name: x\n    envs: ["git::https://example.com/r.git//x.env"]\n',
      'secretGenerator[0].envs[0] "git::https://example.com/r.git//x.env"',
    ],
  ])('refuses a remote reference in %s before running kustomize: %s', async (_, kustomization, entry) => {
    const plugin =
      'apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\nPATH: https://example.com/p.yaml\n';
    const error = await buildError(
      { 'app/kustomization.yaml': kustomization, 'app/t.yaml': plugin, ...release },
      { path: 'app' },
    );
    expect(error.reason).toBe('BuildFailed');
    const file = entry.startsWith('PATH') ? 'app/t.yaml (transformers[0])' : 'app/kustomization.yaml';
    expect(error.message).toBe(
      `${file}: ${entry} is remote. ${REMOTE_ADVICE} and refer to them by relative paths`,
    );
  });

  it('refuses helm charts, which would fetch from their repository', async () => {
    const error = await buildError(
      {
        'app/kustomization.yaml':
          'helmCharts:\n  - name: podinfo\n    repo: https://stefanprodan.github.io/podinfo\n',
      },
      { path: 'app' },
    );
    expect(error.message).toBe(
      'app/kustomization.yaml: helmCharts is not supported: sluice does not run helm',
    );
  });

  it('refuses every key, field and plugin it does not know, naming the file and key', async () => {
    const error = await buildError(
      {
        'app/kustomization.yaml': `resourcez: [cm.yaml]
patches:
  - path: p.yaml
    targett: {kind: ConfigMap}
openapi: {Path: s.json}
transformers:
  - |
    apiVersion: example.com/v1
    kind: Exec
    metadata: {name: x}
validators: [v.yaml]
<<: {resources: [cm.yaml]}
`,
      },
      { path: 'app' },
    );
    expect(error.message).toBe(
      'app/kustomization.yaml: << is not a field sluice knows: refused; ' +
        'app/kustomization.yaml: openapi.Path is not a key sluice knows (only path, version); ' +
        'app/kustomization.yaml: patches[0].targett is not a field sluice knows: refused; ' +
        'app/kustomization.yaml: resourcez is not a field sluice knows: refused; ' +
        'app/kustomization.yaml: validators is not supported: sluice runs no validators; ' +
        'app/kustomization.yaml: transformers[0].kind "Exec" (apiVersion "example.com/v1") is not a builtin generator or transformer sluice knows; sluice runs no plugins',
    );
  });

  it('checks every kustomization reachable from the path, and lists every problem', async () => {
    const error = await buildError(
      {
        'clusters/prod/kustomization.yaml': 'resources: [../../release, https://example.com/a.yaml]\n',
        'release/kustomization.yaml': 'resources: [pool.yaml]\ncomponents: [../components/ha]\n',
        'release/pool.yaml': configMap('pool', { replicas: '3' }),
        'components/ha/kustomization.yaml': 'kind: Component\nresources: [github.com/org/ha/base]\n',
      },
      { path: 'clusters/prod' },
    );
    expect(error.message).toContain(
      'clusters/prod/kustomization.yaml: resources[1] "https://example.com/a.yaml" is remote',
    );
    expect(error.message).toContain(
      'components/ha/kustomization.yaml: resources[0] "github.com/org/ha/base" is remote',
    );
  });

  it('refuses ../ paths that leave the artifact and absolute paths, and allows ../ inside it', async () => {
    const error = await buildError(
      {
        'clusters/prod/kustomization.yaml': `resources:
  - ../../release
  - ../../../outside
patches:
  - path: ../../../../etc/patch.yaml
crds: [/etc/crds.yaml]
`,
        ...release,
      },
      { path: 'clusters/prod' },
    );
    expect(error.message).toBe(
      'clusters/prod/kustomization.yaml: resources[1] "../../../outside" points outside the artifact; ' +
        'clusters/prod/kustomization.yaml: crds[0] "/etc/crds.yaml" is an absolute path; refer to files in the artifact by relative paths; ' +
        'clusters/prod/kustomization.yaml: patches[0].path "../../../../etc/patch.yaml" points outside the artifact',
    );
  });

  it('accepts a local directory that merely looks like a host name', async () => {
    const built = await build(
      {
        'app/kustomization.yaml': 'resources: [example.com/base]\n',
        'app/example.com/base/kustomization.yaml': 'resources: [cm.yaml]\n',
        'app/example.com/base/cm.yaml': configMap('a', { k: 'v' }),
      },
      { path: 'app' },
    );
    expect(built.map((m) => m.origin)).toEqual(['app/example.com/base/cm.yaml']);
  });
});

describe('kustomize build errors', () => {
  it.each([
    [
      'a kind that is not a kustomization',
      { 'app/kustomization.yaml': 'kind: Deployment\nnamePrefix: a-\n' },
      'kind should be Kustomization or Component',
    ],
    [
      'a missing file',
      {
        'app/kustomization.yaml': 'resources: [cm.yaml, missing.yaml]\n',
        'app/cm.yaml': configMap('a', { k: 'v' }),
      },
      "accumulating resources from 'missing.yaml'",
    ],
    [
      'a resource that is not YAML',
      { 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': 'data: [1\n' },
      "accumulating resources from 'cm.yaml': MalformedYAMLError: yaml: line 1: did not find expected ',' or ']' in File: cm.yaml",
    ],
    [
      'a patch in the kustomization that matches nothing',
      {
        'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n  - path: p.yaml\n',
        'app/cm.yaml': configMap('a', { k: 'v' }),
        'app/p.yaml': configMap('b', { k: 'w' }),
      },
      'no resource matches strategic merge patch "ConfigMap.v1.[noGrp]/b.[noNs]"',
    ],
  ])("surfaces kustomize's message for %s, with artifact paths", async (_, files, message) => {
    const error = await buildError(files, { path: 'app' });
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toMatch(/^kustomize build of app\/kustomization\.yaml: /);
    expect(error.message).toContain(message);
    expect(error.message).not.toContain('sluice-build-');
    expect(error.message).not.toContain('../artifact');
  });

  it('names the kustomization file and line when it is not YAML', async () => {
    const error = await buildError({ 'app/kustomization.yaml': 'resources: [cm.yaml\n' }, { path: 'app' });
    expect(error.message).toMatch(/^app\/kustomization\.yaml: line 2, column 1: invalid YAML: /);
  });

  it('removes its temp dirs after a build, whether it succeeded or failed', async () => {
    const previous = process.env.TMPDIR;
    const tmp = mkdtempSync(join(tmpdir(), 'sluice-tmp-'));
    process.env.TMPDIR = tmp;
    try {
      await build(
        { ...release, ...prodOverlay },
        { path: 'clusters/prod', images: [{ name: 'busybox', newTag: '1.37' }] },
      );
      await buildError({ 'app/kustomization.yaml': 'resourcez: []\n' }, { path: 'app' });
      await buildError(
        { 'cm.yaml': configMap('a', { k: 'v' }) },
        { patches: [{ patch: '- op: remove\n  path: /nope\n', target: { kind: 'ConfigMap' } }] },
      );
    } finally {
      process.env.TMPDIR = previous;
    }
    const left = readdirSync(tmp);
    rmSync(tmp, { recursive: true, force: true });
    expect(left).toEqual([]);
  });
});
