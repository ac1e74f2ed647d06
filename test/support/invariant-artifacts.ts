// Hostile artifacts at random (fast-check), for the invariant soak (invariant-scenario.ts): kinds
// (Namespaces, CRDs and their objects, RBAC, cluster-scoped ones), namespaces (the delivery's own,
// another delivery's, one made by hand, one the artifact declares), ownership annotations,
// kustomize features (nested dirs, components, generators, patches that change a kind, a name or
// a namespace), genuine SOPS files (the committed fixtures, MAC intact, every value holding
// PLAINTEXT_MARKER), remote-looking references to a loopback trap, and alias-heavy YAML.
// An artifact is a plain value: fast-check shrinks it, and a failure prints it.
// No vitest imports: the soak runs it under plain tsx.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export const NAMESPACES = ['mine', 'theirs', 'handmade', 'declared'] as const;
export type NamespaceChoice = (typeof NAMESPACES)[number];
export const KINDS = [
  'ConfigMap',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'Namespace',
  'Widget',
] as const;
export type KindChoice = (typeof KINDS)[number];
/** `shared`: the other delivery's object (in `theirs`); `by-hand`: a hand-made one (in `handmade`). */
export const NAMES = ['shared', 'by-hand', 'x', 'y'] as const;
export const SOPS_FIXTURES = ['age-secret.yaml', 'multi-document.yaml', 'kms-secret.yaml'] as const;
export const REMOTES = [
  'resource',
  'resource-brace',
  'generator-file',
  'inline-generator',
  'git-base',
  'component',
] as const;

export interface ObjectSpec {
  readonly kind: KindChoice;
  readonly ns: NamespaceChoice;
  readonly name: (typeof NAMES)[number];
  /** `sluice.io/takeover-from: <the other delivery>`. */
  readonly takeover: boolean;
  readonly pruneDisabled: boolean;
  readonly force: boolean;
}

export interface SopsSpec {
  readonly fixture: (typeof SOPS_FIXTURES)[number];
  readonly ns: 'mine' | 'theirs';
  /** A kustomize patch on the built Secret: another kind, another name or namespace. */
  readonly patch: 'none' | 'to-leak' | 'to-configmap' | 'rename' | 'move';
}

export interface ArtifactSpec {
  readonly objects: readonly ObjectSpec[];
  readonly sops: readonly SopsSpec[];
  /** A CRD of kind `Leak` whose schema gives the decrypted keys an `enum`. */
  readonly leakCrd: boolean;
  readonly component: boolean;
  readonly generator: boolean;
  readonly remotes: readonly (typeof REMOTES)[number][];
  /** Levels of a "billion laughs" file listed in `resources:` (0: none; 9 aliases per level). */
  readonly laughs: number;
}

const objectSpec: fc.Arbitrary<ObjectSpec> = fc.record({
  kind: fc.constantFrom(...KINDS),
  ns: fc.constantFrom(...NAMESPACES),
  name: fc.constantFrom(...NAMES),
  takeover: fc.boolean(),
  pruneDisabled: fc.boolean(),
  force: fc.boolean(),
});
const sopsSpec: fc.Arbitrary<SopsSpec> = fc.record({
  fixture: fc.constantFrom(...SOPS_FIXTURES),
  ns: fc.constantFrom('mine' as const, 'theirs' as const),
  patch: fc.constantFrom(
    'none' as const,
    'to-leak' as const,
    'to-configmap' as const,
    'rename' as const,
    'move' as const,
  ),
});

/** One artifact; `hostility` 0..1 weighs the rare features (remote references, laughs). */
export const artifactSpec: fc.Arbitrary<ArtifactSpec> = fc.record({
  objects: fc.array(objectSpec, { minLength: 1, maxLength: 6 }),
  sops: fc.array(sopsSpec, { maxLength: 2 }),
  leakCrd: fc.boolean(),
  component: fc.boolean(),
  generator: fc.boolean(),
  remotes: fc.oneof(
    { weight: 3, arbitrary: fc.constant([] as (typeof REMOTES)[number][]) },
    { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom(...REMOTES), { minLength: 1, maxLength: 2 }) },
  ),
  laughs: fc.oneof(
    { weight: 5, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 3, max: 9 }) },
  ),
});

/** Two revisions of the same delivery: the second prunes what the first alone had. */
export const revisionsSpec = fc.tuple(artifactSpec, artifactSpec);

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'sops');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
/** The Secret names and (base64 or string) keys in each fixture, for patches and the Leak schema. */
const FIXTURE_SECRETS: Record<SopsSpec['fixture'], readonly string[]> = {
  'age-secret.yaml': ['api-token'],
  'multi-document.yaml': ['first', 'second'],
  'kms-secret.yaml': ['db-credentials'],
};

export interface Names {
  readonly tag: string;
  /** Namespace per choice. */
  readonly ns: Record<NamespaceChoice, string>;
  /** The other registered delivery (owner of `theirs`/shared objects). */
  readonly other: string;
  readonly widgetGroup: string;
  readonly leakGroup: string;
  /** host:port of the loopback trap standing for the internet. */
  readonly trap: string;
}

const OWNERSHIP = {
  takeover: 'sluice.io/takeover-from',
  prune: 'sluice.io/prune',
  force: 'sluice.io/force',
} as const;

type Obj = Record<string, unknown> & { kind: string; apiVersion: string; metadata: Record<string, unknown> };

export function widgetCrd(group: string): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

function leakCrd(group: string): Obj {
  const enumOf = { type: 'string', enum: ['not-the-value'] };
  const keys = { token: enumOf, value: enumOf, password: enumOf, username: enumOf, '1': enumOf };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `leaks.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'leaks', singular: 'leak', kind: 'Leak', listKind: 'LeakList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              'x-kubernetes-preserve-unknown-fields': true,
              properties: {
                data: { type: 'object', properties: keys },
                stringData: { type: 'object', properties: keys },
              },
            },
          },
        },
      ],
    },
  };
}

/** The object an ObjectSpec stands for. */
export function objectOf(spec: ObjectSpec, names: Names): Obj {
  const annotations: Record<string, string> = {};
  if (spec.takeover) annotations[OWNERSHIP.takeover] = names.other;
  if (spec.pruneDisabled) annotations[OWNERSHIP.prune] = 'disabled';
  if (spec.force) annotations[OWNERSHIP.force] = 'enabled';
  const namespace = names.ns[spec.ns];
  const meta = (name: string, namespaced: boolean) => ({
    name,
    ...(namespaced && { namespace }),
    ...(Object.keys(annotations).length > 0 && { annotations }),
  });
  switch (spec.kind) {
    case 'ConfigMap':
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(spec.name, true), data: { v: 'pushed' } };
    case 'ServiceAccount':
      return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(spec.name, true) };
    case 'Role':
      return {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta(spec.name, true),
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }],
      };
    case 'RoleBinding':
      return {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta(spec.name, true),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: spec.name, namespace }],
      };
    case 'ClusterRole':
      return {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: meta(`${names.tag}-${spec.name}`, false),
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      };
    case 'Namespace':
      return { apiVersion: 'v1', kind: 'Namespace', metadata: meta(namespace, false) };
    case 'Widget':
      return {
        apiVersion: `${names.widgetGroup}/v1`,
        kind: 'Widget',
        metadata: meta(spec.name, true),
        spec: { size: 1 },
      };
  }
}

const yamlDocs = (objects: readonly unknown[]) => objects.map((o) => stringify(o)).join('---\n');

/** A "billion laughs" document: `levels` levels of 9 aliases each. */
export function laughs(levels: number, name: string): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', `metadata: {name: ${name}}`, 'lol0: &l0 ["lol"]'];
  for (let i = 1; i <= levels; i++)
    lines.push(`lol${i}: &l${i} [${Array.from({ length: 9 }, () => `*l${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

/**
 * The files of an artifact: a root kustomization listing the objects (in a nested dir), the SOPS
 * files (their own kustomization with the namespace and patches), a component, a generator, the
 * remote references and the laughs file, plus the CRDs and Namespaces the objects need.
 */
export function artifactFiles(spec: ArtifactSpec, names: Names): Record<string, string> {
  const objects = spec.objects.map((o) => objectOf(o, names));
  const kinds = new Set(spec.objects.map((o) => o.kind));
  const extra: Obj[] = [];
  if (kinds.has('Widget')) extra.push(widgetCrd(names.widgetGroup));
  // A namespace `declared` is new: the artifact declares it whenever something lands in it.
  const declaredUsed = spec.objects.some((o) => o.ns === 'declared' && o.kind !== 'ClusterRole');
  const declaresIt = spec.objects.some((o) => o.kind === 'Namespace' && o.ns === 'declared');
  if (declaredUsed && !declaresIt)
    extra.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: names.ns.declared } });
  if (spec.leakCrd) extra.push(leakCrd(names.leakGroup));
  const files: Record<string, string> = {
    'app/objects.yaml': yamlDocs(dedupe([...extra, ...objects])),
    'app/kustomization.yaml': stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['objects.yaml'],
    }),
  };
  const resources: string[] = ['app'];
  const components: string[] = [];
  const kustomization: Record<string, unknown> = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
  };
  spec.sops.forEach((s, i) => {
    const dir = `secrets-${i}`;
    const secrets = FIXTURE_SECRETS[s.fixture];
    const patches = secrets.map((name) => ({
      target: { kind: 'Secret', name },
      patch: JSON.stringify(patchOps(s.patch, names)),
    }));
    files[`${dir}/${s.fixture}`] = fixture(s.fixture);
    files[`${dir}/kustomization.yaml`] = stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      namespace: names.ns[s.ns],
      resources: [s.fixture],
      ...(s.patch !== 'none' && { patches }),
    });
    resources.push(dir);
  });
  if (spec.component) {
    files['comp/kustomization.yaml'] = stringify({
      apiVersion: 'kustomize.config.k8s.io/v1alpha1',
      kind: 'Component',
      configMapGenerator: [{ name: 'from-component', namespace: names.ns.mine, literals: ['a=b'] }],
    });
    components.push('comp');
  }
  if (spec.generator)
    kustomization.configMapGenerator = [
      {
        name: 'generated',
        namespace: names.ns.mine,
        literals: ['k=v'],
        options: { disableNameSuffixHash: true },
      },
    ];
  const trap = names.trap;
  for (const remote of spec.remotes) {
    if (remote === 'resource') resources.push(`http://${trap}/x.yaml`);
    if (remote === 'resource-brace') resources.push(`http://${trap}/x.yaml?v={`);
    if (remote === 'git-base') resources.push(`https://${trap}/org/repo//base?ref=main`);
    if (remote === 'component') components.push(`http://${trap}/org/comp`);
    if (remote === 'inline-generator')
      kustomization.generators = [
        stringify({
          apiVersion: 'builtin',
          kind: 'ConfigMapGenerator',
          metadata: { name: 'remote-inline', namespace: names.ns.mine },
          files: [`k=http://${trap}/inline`],
        }),
      ];
    if (remote === 'generator-file')
      kustomization.configMapGenerator = [
        ...((kustomization.configMapGenerator as unknown[] | undefined) ?? []),
        { name: 'remote', namespace: names.ns.mine, files: [`k=http://${trap}/f`] },
      ];
  }
  if (spec.laughs > 0) {
    files['laughs.yaml'] = laughs(spec.laughs, 'laughs');
    resources.push('laughs.yaml');
  }
  files['kustomization.yaml'] = stringify({
    ...kustomization,
    resources,
    ...(components.length > 0 && { components }),
  });
  return files;
}

function patchOps(patch: SopsSpec['patch'], names: Names): unknown[] {
  switch (patch) {
    case 'none':
      return [];
    case 'to-leak':
      return [
        { op: 'replace', path: '/apiVersion', value: `${names.leakGroup}/v1` },
        { op: 'replace', path: '/kind', value: 'Leak' },
      ];
    case 'to-configmap':
      return [{ op: 'replace', path: '/kind', value: 'ConfigMap' }];
    case 'rename':
      return [{ op: 'replace', path: '/metadata/name', value: 'renamed' }];
    case 'move':
      return [{ op: 'replace', path: '/metadata/namespace', value: names.ns.handmade }];
  }
}

/** Drops later duplicates (same kind, namespace, name): kustomize refuses them, a boring failure. */
function dedupe(objects: readonly Obj[]): Obj[] {
  const seen = new Set<string>();
  return objects.filter((o) => {
    const key = `${o.kind}/${String(o.metadata.namespace)}/${String(o.metadata.name)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
