// An invalid revision changes nothing that could be checked before the first write: custom
// resources of a CRD the artifact introduces are checked against that CRD's schema before any
// write, so the CRD, cluster RBAC, Namespaces and everything else of the revision stay out of the
// cluster. What only the API server can tell once a Namespace exists leaves at most the
// definitions stage (CRDs, Namespaces) applied, never cluster RBAC.
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readInventory } from '../../functions/core/store/inventory.ts';
import { getStatus } from '../../functions/core/store/status.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const kc = bed.kubeConfig();
const deps = engineDeps();
const core = kc.makeApiClient(CoreV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const crds = kc.makeApiClient(ApiextensionsV1Api);
const objects = KubernetesObjectApi.makeApiClient(kc);

/** An existing namespace the delivery's first, good revision lives in. */
const home = uniqueName('inv-home');
beforeAll(() => createNamespace(kc, home));

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch {
    return false;
  }
}

/** Writes (not dry-runs) since `since` whose request URI names `fragment`, from the API server's audit log. */
function writesNaming(fragment: string, since: string): string[] {
  return readFileSync(bed.kube.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { verb: string; requestURI: string; requestReceivedTimestamp: string })
    .filter((e) => e.requestReceivedTimestamp > since && e.requestURI.includes(fragment))
    .filter(
      (e) => ['create', 'update', 'patch', 'delete'].includes(e.verb) && !e.requestURI.includes('dryRun'),
    )
    .map((e) => `${e.verb} ${e.requestURI}`);
}

const crdYaml = (group: string, versions = '') => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size, mode]
              properties:
                size: { type: integer }
                mode: { type: string, enum: [fast, slow] }
                port: { x-kubernetes-int-or-string: true }
                note: { type: string, nullable: true }
                extra: { type: object, x-kubernetes-preserve-unknown-fields: true }
${versions}`;

const widget = (name: string, ns: string, spec: string, apiVersion = 'v1') =>
  `apiVersion: GROUP/${apiVersion}\nkind: Widget\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec: ${spec}\n`;

/** One delivery, whose first revision (a ConfigMap in an existing namespace) is applied. */
async function deliveryWithAGoodRevision(prefix: string) {
  const name = uniqueName(prefix);
  const repository = uniqueName(`invalid-revision/${prefix}`);
  const group = `${uniqueName('g')}.sluice.test`;
  const ns = uniqueName(prefix);
  await pushFiles(bed, repository, 'main', {
    'home.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${home}\ndata:\n  k: v\n`,
  });
  await registerDelivery(deps, bed, { name, repository, prune: true });
  const first = await run(name, deps);
  expect(first, first.message).toMatchObject({ outcome: 'Succeeded' });
  const push = (files: Record<string, string>) =>
    pushFiles(
      bed,
      repository,
      'main',
      Object.fromEntries(
        Object.entries(files).map(([path, text]) => [path, text.replaceAll('GROUP', group)]),
      ),
    );
  return {
    name,
    group,
    ns,
    push,
    revision: first.revision,
    inventory: await readInventory(deps.db, name),
  };
}

/** The artifact of the first test: a new CRD, cluster RBAC, a new Namespace, a ConfigMap and widgets. */
function revision(group: string, ns: string, name: string, widgets: string): Record<string, string> {
  return {
    'crd.yaml': crdYaml(group),
    'rbac.yaml': `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${name}-widgets
rules:
  - { apiGroups: ['${group}'], resources: [widgets], verbs: [get, list] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${name}-widgets
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${name}-widgets }
subjects:
  - { kind: ServiceAccount, name: reader, namespace: ${ns} }
`,
    'ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`,
    'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  k: v\n`,
    'widgets.yaml': widgets,
  };
}

describe('a revision whose custom resources fail their new CRD’s schema', () => {
  it('is refused before any write, naming file, object and field; the fixed revision is applied', async () => {
    const d = await deliveryWithAGoodRevision('inv');
    const { ns, group, name } = d;
    const readAll = {
      crd: () => crds.readCustomResourceDefinition({ name: `widgets.${group}` }),
      clusterRole: () => rbac.readClusterRole({ name: `${name}-widgets` }),
      binding: () => rbac.readClusterRoleBinding({ name: `${name}-widgets` }),
      namespace: () => core.readNamespace({ name: ns }),
      configMap: () => core.readNamespacedConfigMap({ name: 'settings', namespace: ns }),
    };

    await d.push(
      revision(
        group,
        ns,
        name,
        [
          widget('wrong-type', ns, '{ size: three, mode: fast }'),
          widget('missing', ns, '{ mode: slow }'),
          widget('enum', ns, '{ size: 1, mode: warp }'),
        ].join('---\n'),
      ),
    );
    const since = new Date().toISOString();
    const failed = await run(name, deps);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    for (const [what, read] of Object.entries(readAll)) expect(await exists(read), what).toBe(false);
    for (const fragment of [group, `${name}-widgets`, ns]) expect(writesNaming(fragment, since)).toEqual([]);
    expect(await readInventory(deps.db, name)).toEqual(d.inventory);
    expect(await getStatus(deps.db, name)).toMatchObject({
      reason: 'ValidationFailed',
      lastAppliedRevision: d.revision,
    });
    expect(failed.message).toContain(
      `widgets.yaml: Widget/${ns}/wrong-type: spec.size: must be of type integer, not string`,
    );
    expect(failed.message).toContain(`widgets.yaml#1: Widget/${ns}/missing: spec.size: Required value`);
    expect(failed.message).toContain(
      `widgets.yaml#2: Widget/${ns}/enum: spec.mode: Unsupported value "warp": supported values: "fast", "slow"`,
    );

    // Fixed, with the dialect's cases the API server accepts: int-or-string, nullable, preserved fields.
    await d.push(
      revision(
        group,
        ns,
        name,
        [
          widget('wrong-type', ns, '{ size: 3, mode: fast, port: 8080 }'),
          widget('missing', ns, '{ size: 1, mode: slow, port: http, note: null }'),
          widget('enum', ns, '{ size: 1, mode: fast, extra: { any: { thing: [1, two] } } }'),
        ].join('---\n'),
      ),
    );
    const applied = await run(name, deps);
    expect(applied, applied.message).toMatchObject({
      outcome: 'Succeeded',
      changes: { created: 8, deleted: 1 },
    });
    for (const [what, read] of Object.entries(readAll)) expect(await exists(read), what).toBe(true);
    const stored = (await objects.read({
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'enum', namespace: ns },
    })) as { spec?: { extra?: unknown } };
    expect(stored.spec?.extra).toEqual({ any: { thing: [1, 'two'] } });
  });

  it('refuses a field the schema does not declare, as the API server refuses it in a server-side apply', async () => {
    const d = await deliveryWithAGoodRevision('inv-unknown');
    await d.push({
      'crd.yaml': crdYaml(d.group),
      'w.yaml': widget('w', home, '{ size: 1, mode: fast, colour: red }'),
    });
    const failed = await run(d.name, deps);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(await exists(() => crds.readCustomResourceDefinition({ name: `widgets.${d.group}` }))).toBe(false);
    expect(await readInventory(deps.db, d.name)).toEqual(d.inventory);
    expect(failed.message).toContain(`w.yaml: Widget/${home}/w: spec.colour: field not declared in schema`);
  });

  it('refuses a custom resource in a version its CRD does not define or does not serve, before any write', async () => {
    const d = await deliveryWithAGoodRevision('inv-version');
    const servedFalse = `    - name: v1beta1
      served: false
      storage: false
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`;
    await d.push({
      'crd.yaml': crdYaml(d.group, servedFalse),
      'w.yaml': [
        widget('two', home, '{ size: 1, mode: fast }', 'v2'),
        widget('beta', home, '{ size: 1, mode: fast }', 'v1beta1'),
      ].join('---\n'),
    });
    const failed = await run(d.name, deps);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(failed.message).toContain(
      `w.yaml: Widget/${home}/two: apiVersion ${d.group}/v2 is not a version of CustomResourceDefinition widgets.${d.group} (crd.yaml), which defines v1, v1beta1`,
    );
    expect(failed.message).toContain(
      `w.yaml#1: Widget/${home}/beta: apiVersion ${d.group}/v1beta1 is not served by CustomResourceDefinition widgets.${d.group} (crd.yaml) (served: false)`,
    );
    expect(await exists(() => crds.readCustomResourceDefinition({ name: `widgets.${d.group}` }))).toBe(false);
    expect(await readInventory(deps.db, d.name)).toEqual(d.inventory);
  });

  it('refuses a custom resource of a new CRD in a namespace that neither exists nor is in the artifact', async () => {
    const d = await deliveryWithAGoodRevision('inv-nons');
    await d.push({
      'crd.yaml': crdYaml(d.group),
      'w.yaml': widget('w', 'no-such-namespace', '{ size: 1, mode: fast }'),
    });
    const failed = await run(d.name, deps);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(failed.message).toContain(
      'w.yaml: Widget/no-such-namespace/w: namespaces "no-such-namespace" not found',
    );
    expect(await exists(() => crds.readCustomResourceDefinition({ name: `widgets.${d.group}` }))).toBe(false);
  });
});

describe('a revision only the API server can refuse, once a new Namespace exists', () => {
  it('leaves at most the definitions stage applied (the Namespace, inventoried), never cluster RBAC', async () => {
    const d = await deliveryWithAGoodRevision('inv-late');
    const { ns, name, group } = d;
    const files = revision(group, ns, name, '# no widgets\n');
    // A ConfigMap value must be a string: known only to the API server, and only once the namespace exists.
    files['cm.yaml'] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  k: 1\n`;
    delete files['crd.yaml'];
    await d.push(files);
    const failed = await run(name, deps);
    expect(failed).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(failed.message).toContain(`cm.yaml: ConfigMap/${ns}/settings:`);
    expect(await exists(() => rbac.readClusterRole({ name: `${name}-widgets` }))).toBe(false);
    expect(await exists(() => rbac.readClusterRoleBinding({ name: `${name}-widgets` }))).toBe(false);
    expect(await exists(() => core.readNamespacedConfigMap({ name: 'settings', namespace: ns }))).toBe(false);
    // The Namespace stays, inventoried by the write-ahead, so a later revision prunes or keeps it.
    expect(await exists(() => core.readNamespace({ name: ns }))).toBe(true);
    expect((await readInventory(deps.db, name)).map((e) => e.id)).toContain(`_${ns}__Namespace`);

    files['cm.yaml'] = files['cm.yaml']!.replace('k: 1', 'k: "1"');
    await d.push(files);
    const applied = await run(name, deps);
    expect(applied, applied.message).toMatchObject({ outcome: 'Succeeded' });
    expect(await exists(() => rbac.readClusterRoleBinding({ name: `${name}-widgets` }))).toBe(true);
  });
});
