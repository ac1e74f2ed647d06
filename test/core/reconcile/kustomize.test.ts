// The build step in whole reconciles, on the real components: kustomize overlays over a release
// base, upgrades of the base, the release-overlays example, delivery patches and images, and
// build failures that leave the cluster and the inventory as they were.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readInventory } from '../../../functions/core/store/inventory.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const kc = bed.kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);

const pool = (data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: machinepool-mp-0\ndata:\n${Object.entries(data)
    .map(([key, value]) => `  ${key}: "${value}"\n`)
    .join('')}`;
const web = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: ${image}
`;

/** A release base and a prod overlay over it, as one artifact. */
function releaseArtifact(ns: string, release: { version: string; replicas: string; image: string }) {
  return {
    'release/kustomization.yaml': 'resources: [machinepool.yaml, web.yaml, settings.yaml]\n',
    'release/machinepool.yaml': pool({ replicas: release.replicas, kubernetesVersion: release.version }),
    'release/web.yaml': web(release.image),
    'release/settings.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: safe\n`,
    'clusters/prod/kustomization.yaml': `namespace: ${ns}
resources: [../../release]
patches:
  - path: machinepool.yaml
images:
  - name: nginx
    newTag: 1.27.3
`,
    'clusters/prod/machinepool.yaml': pool({ replicas: '6' }),
  };
}

async function liveConfigMap(name: string, namespace: string) {
  return core.readNamespacedConfigMap({ name, namespace });
}

async function configMapNames(namespace: string): Promise<string[]> {
  const list = await core.listNamespacedConfigMap({ namespace });
  return list.items.map((item) => item.metadata!.name!).filter((name) => name !== 'kube-root-ca.crt');
}

/** Every file under `dir`, keyed by its path relative to `dir`. */
function readTree(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(dir, path)] = readFileSync(path, 'utf8');
  }
  return files;
}

describe('kustomize overlays over a release base', () => {
  it('applies the overlay, and an upgrade of the base changes only what the release changed', async () => {
    const ns = uniqueName('overlay');
    const repository = uniqueName('kustomize/release');
    const name = uniqueName('overlay');
    await createNamespace(kc, ns);
    await pushFiles(
      bed,
      repository,
      'main',
      releaseArtifact(ns, { version: 'v1.32.3', replicas: '3', image: 'nginx:1.27' }),
    );
    await registerDelivery(deps, bed, { name, repository, path: 'clusters/prod', prune: true });

    const first = await run(name, deps);
    expect(first).toMatchObject({
      outcome: 'Succeeded',
      changes: { created: 3, configured: 0, unchanged: 0, deleted: 0 },
    });
    expect((await liveConfigMap('machinepool-mp-0', ns)).data).toEqual({
      replicas: '6',
      kubernetesVersion: 'v1.32.3',
    });
    const before = {
      pool: (await liveConfigMap('machinepool-mp-0', ns)).metadata!.resourceVersion,
      settings: (await liveConfigMap('settings', ns)).metadata!.resourceVersion,
      web: (await apps.readNamespacedDeployment({ name: 'web', namespace: ns })).metadata!.resourceVersion,
    };

    // The release moves to a new Kubernetes version, and also changes what the overlay overrides.
    await pushFiles(
      bed,
      repository,
      'main',
      releaseArtifact(ns, { version: 'v1.33.1', replicas: '4', image: 'nginx:1.28' }),
    );
    const upgrade = await run(name, deps);
    expect(upgrade).toMatchObject({
      outcome: 'Succeeded',
      changes: { created: 0, configured: 1, unchanged: 2, deleted: 0 },
    });
    expect(upgrade.revision).not.toBe(first.revision);
    const upgraded = await liveConfigMap('machinepool-mp-0', ns);
    expect(upgraded.data).toEqual({ replicas: '6', kubernetesVersion: 'v1.33.1' });
    expect(upgraded.metadata!.resourceVersion).not.toBe(before.pool);
    expect((await liveConfigMap('settings', ns)).metadata!.resourceVersion).toBe(before.settings);
    const liveWeb = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
    expect(liveWeb.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.27.3');
    expect(liveWeb.metadata!.resourceVersion).toBe(before.web);
    expect((await readInventory(deps.db, name)).map((entry) => entry.id).sort()).toEqual([
      `${ns}_machinepool-mp-0__ConfigMap`,
      `${ns}_settings__ConfigMap`,
      `${ns}_web_apps_Deployment`,
    ]);
  });

  it('builds and applies examples/release-overlays, one delivery per cluster', async () => {
    const example = resolve(import.meta.dirname, '../../../examples/release-overlays');
    const files = readTree(example);
    const repository = uniqueName('kustomize/fleet');
    await pushFiles(bed, repository, 'v21', files);
    const config = parse(files['sluice.yaml']!) as { deliveries: Record<string, unknown>[] };
    expect(config.deliveries.map((d) => d.path)).toEqual(['clusters/prod', 'clusters/staging']);

    for (const { name: _name, source: _source, cluster: _cluster, ...spec } of config.deliveries) {
      const name = uniqueName(String(_name));
      await registerDelivery(deps, bed, { ...spec, name, repository, tag: 'v21' });
      expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 2 } });
    }
    const prod = await liveConfigMap('machinepool-mp-0', 'fleet-prod');
    expect(prod.data).toEqual({
      clusterName: 'prod',
      replicas: '6',
      kubernetesVersion: 'v1.32.3',
      instanceType: 'm6i.xlarge',
    });
    expect(prod.metadata?.labels).toMatchObject({
      'fleet.example.com/release': 'v21.0.0',
      'fleet.example.com/cluster': 'prod',
    });
    const staging = await liveConfigMap('machinepool-mp-0', 'fleet-staging');
    expect(staging.data).toEqual({
      clusterName: 'staging',
      replicas: '1',
      kubernetesVersion: 'v1.33.1',
      instanceType: 'm6i.large',
      spot: 'true',
    });
    expect((await core.readNamespace({ name: 'fleet-staging' })).metadata?.labels).toMatchObject({
      'fleet.example.com/cluster': 'staging',
    });
  });
});

describe('delivery patches and images in a reconcile', () => {
  it('applies patches, images and substitution to the live objects', async () => {
    const ns = uniqueName('patches');
    const repository = uniqueName('kustomize/patches');
    const name = uniqueName('patches');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'web.yaml': web('nginx:1.27') });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      targetNamespace: ns,
      patches: [
        {
          patch:
            'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n',
        },
        {
          patch:
            '[{"op": "add", "path": "/metadata/annotations", "value": {"example.com/owner": "payments"}}]',
          target: { kind: 'Deployment', name: 'web' },
        },
      ],
      images: [{ name: 'nginx', newName: 'registry.example.com/mirror/nginx', newTag: '1.27.4' }],
      postBuild: { substitute: { replicas: '3' } },
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 1 } });
    const live = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
    expect(live.spec?.replicas).toBe(3);
    expect(live.metadata?.annotations).toMatchObject({ 'example.com/owner': 'payments' });
    expect(live.spec?.template.spec?.containers[0]?.image).toBe('registry.example.com/mirror/nginx:1.27.4');
    expect((await run(name, deps)).changes).toMatchObject({ unchanged: 1, configured: 0 });
  });

  it('fails naming the patch whose target matches nothing, applying nothing', async () => {
    const ns = uniqueName('nomatch');
    const repository = uniqueName('kustomize/nomatch');
    const name = uniqueName('nomatch');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'web.yaml': web('nginx:1.27') });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      targetNamespace: ns,
      patches: [
        { patch: '- op: remove\n  path: /spec/replicas\n', target: { kind: 'Deployment', name: 'wbe' } },
      ],
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({
      outcome: 'Failed',
      reason: 'BuildFailed',
      message: 'patches[0].target (kind: Deployment, name: wbe) matches no object of the build',
    });
    expect((await apps.listNamespacedDeployment({ namespace: ns })).items).toEqual([]);
    expect(await readInventory(deps.db, name)).toEqual([]);
  });
});

describe('build failures leave the cluster and the inventory as they were', () => {
  it("records kustomize's message in the status when a new revision does not build", async () => {
    const ns = uniqueName('broken');
    const repository = uniqueName('kustomize/broken');
    const name = uniqueName('broken');
    await createNamespace(kc, ns);
    const good = {
      'app/kustomization.yaml': `namespace: ${ns}\nresources: [machinepool.yaml]\n`,
      'app/machinepool.yaml': pool({ replicas: '2' }),
    };
    await pushFiles(bed, repository, 'main', good);
    await registerDelivery(deps, bed, { name, repository, path: 'app', prune: true });
    const applied = await run(name, deps);
    expect(applied.outcome).toBe('Succeeded');
    const inventory = await readInventory(deps.db, name);
    const resourceVersion = (await liveConfigMap('machinepool-mp-0', ns)).metadata!.resourceVersion;

    await pushFiles(bed, repository, 'main', {
      'app/kustomization.yaml': `namespace: ${ns}\nresourcez: [machinepool.yaml, extra.yaml]\n`,
      'app/machinepool.yaml': pool({ replicas: '9' }),
      'app/extra.yaml': pool({ replicas: '1' }).replace('machinepool-mp-0', 'extra'),
    });
    const result = await run(name, deps);
    const message = 'app/kustomization.yaml: resourcez is not a field sluice knows: refused';
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed', message });
    expect(result.revision).not.toBe(applied.revision);
    expect(await getStatus(deps.db, name)).toMatchObject({
      ready: false,
      reason: 'BuildFailed',
      message,
      lastAppliedRevision: applied.revision,
      lastAttemptedRevision: result.revision,
    });
    expect(await readInventory(deps.db, name)).toEqual(inventory);
    const live = await liveConfigMap('machinepool-mp-0', ns);
    expect(live.data).toEqual({ replicas: '2' });
    expect(live.metadata!.resourceVersion).toBe(resourceVersion);
    expect(await configMapNames(ns)).toEqual(['machinepool-mp-0']);
  });

  it('refuses remote bases and ../ escapes before building, naming the file and entry', async () => {
    const ns = uniqueName('remote');
    const repository = uniqueName('kustomize/remote');
    const name = uniqueName('remote');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'clusters/prod/kustomization.yaml': `namespace: ${ns}
resources:
  - local.yaml
  - https://github.com/org/fleet//release?ref=v21
  - github.com/org/fleet/release
  - ../../../outside
`,
      'clusters/prod/local.yaml': pool({ replicas: '1' }),
    });
    await registerDelivery(deps, bed, { name, repository, path: 'clusters/prod', prune: true });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'BuildFailed' });
    expect(result.message).toBe(
      'clusters/prod/kustomization.yaml: resources[1] "https://github.com/org/fleet//release?ref=v21" is remote; ' +
        'clusters/prod/kustomization.yaml: resources[2] "github.com/org/fleet/release" is remote; ' +
        'clusters/prod/kustomization.yaml: resources[3] "../../../outside" points outside the artifact. ' +
        'The artifact must be self-contained: vendor remote bases into it and refer to them by relative paths',
    );
    expect((await getStatus(deps.db, name))?.message).toBe(result.message);
    expect(await configMapNames(ns)).toEqual([]);
    expect(await readInventory(deps.db, name)).toEqual([]);
  });

  it('names the base file and the variable when substitution fails after a kustomize build', async () => {
    const ns = uniqueName('subst');
    const repository = uniqueName('kustomize/subst');
    const name = uniqueName('subst');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'release/kustomization.yaml': 'resources: [machinepool.yaml]\n',
      'release/machinepool.yaml': pool({ clusterName: '${cluster_name}', region: '${region:=eu-west-1}' }),
      'clusters/prod/kustomization.yaml': `namespace: ${ns}\nresources: [../../release]\n`,
    });
    await registerDelivery(deps, bed, {
      name,
      repository,
      path: 'clusters/prod',
      prune: true,
      postBuild: { substitute: { cluster: 'prod' } },
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(result.message).toMatch(
      new RegExp(
        `^release/machinepool\\.yaml: ConfigMap/${ns}/machinepool-mp-0: variable "cluster_name" is not defined`,
      ),
    );
    expect(await configMapNames(ns)).toEqual([]);
  });
});
