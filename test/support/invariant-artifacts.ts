// Hostile artifacts at random (fast-check), for the invariant soak (invariant-scenario.ts). Most
// of an artifact is something sluice must apply: kinds (Namespaces, CRDs and their objects, RBAC,
// cluster-scoped ones), namespaces (the delivery's own, another delivery's, one made by hand, one
// the artifact declares), ownership annotations, kustomize features (nested dirs, components,
// generators), Secrets encrypted at run time that sluice decrypts (every value holding
// PLAINTEXT_MARKER), a CRD with a `pattern`, and an admission policy quoting a Secret. A minority
// (a quarter) of artifacts carry ONE hostile feature (`Hostile`): an encrypted Secret patched into
// another kind, name or namespace; remote references to a loopback trap, or the same in a
// kustomization key spelled in another case; a "billion laughs" file, deep or wide; a CRD pattern
// that backtracks catastrophically; a sops block whose `encrypted_regex` was edited after
// encryption (to a catastrophic one). So most runs apply, prune and remove.
// An artifact is a plain value: fast-check shrinks it, and a failure prints it.
// No vitest imports: the soak runs it under plain tsx.
import fc from 'fast-check';
import { stringify } from 'yaml';
import { PLAINTEXT_MARKER } from '../fixtures/sops/plaintext.ts';
import { sopsEncrypt } from './sops-encrypt.ts';

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
export const REMOTES = [
  'resource',
  'resource-brace',
  'generator-file',
  'inline-generator',
  'git-base',
  'component',
] as const;
/** Key-case variants of a kustomization's list keys: kustomize reads them as `resources`/`bases`. */
export const KEY_CASES = ['Resources', 'RESOURCES', 'Bases'] as const;

export interface ObjectSpec {
  readonly kind: KindChoice;
  readonly ns: NamespaceChoice;
  readonly name: (typeof NAMES)[number];
  /** `sluice.io/takeover-from: <the other delivery>`. */
  readonly takeover: boolean;
  readonly pruneDisabled: boolean;
  readonly force: boolean;
}

/**
 * A Secret encrypted at run time (sops-encrypt.ts) that names B's own namespace in its file, so
 * sluice decrypts it: `sec-<secret>` (revisions share the names, so the second keeps, changes or
 * prunes the first's), its value in `data` (base64) or `stringData`, in the root or in a
 * sub-kustomization that repeats the file's namespace (which the identity rule accepts).
 */
export interface SopsSpec {
  readonly secret: 'a' | 'b';
  readonly field: 'data' | 'stringData';
  readonly dir: 'root' | 'sub';
}

/** The hostile moves on an encrypted Secret, each of which must fail the run without a leak. */
export const SOPS_ATTACKS = ['to-leak', 'to-configmap', 'rename', 'move', 'kustomize-namespace'] as const;
/** Catastrophic regular expressions (exponential backtracking) and an input that makes them backtrack. */
export const CATASTROPHIC = ['^(a+)+$', '^(a|aa)+$', '^(a|a?)+$'] as const;
/**
 * Backtracking input lengths: about 5–30 s of a JavaScript RegExp on this machine, so a run ends
 * (measured: 26 characters take a sops `encrypted_regex` 13 s and ajv's CRD `pattern` 107 s on
 * the loaded 2-core machine, so the CRD's input is shorter).
 */
export const EVIL_LENGTH = { sops: 26, crd: 23 } as const;
export const evilInput = (length: number, tail = '!') => `${'a'.repeat(length)}${tail}`;

/** At most one hostile feature per artifact, so most revisions apply, prune and remove. */
export type Hostile =
  | { readonly kind: 'none' }
  | { readonly kind: 'sops-attack'; readonly attack: (typeof SOPS_ATTACKS)[number] }
  | { readonly kind: 'remote'; readonly remotes: readonly (typeof REMOTES)[number][] }
  | { readonly kind: 'key-case'; readonly key: (typeof KEY_CASES)[number] }
  | { readonly kind: 'laughs'; readonly levels: number; readonly width: number; readonly leafBytes: number }
  | { readonly kind: 'crd-pattern'; readonly pattern: (typeof CATASTROPHIC)[number] }
  | { readonly kind: 'sops-regex'; readonly regex: (typeof CATASTROPHIC)[number] | '^(data)$' };
export type HostileKind = Exclude<Hostile['kind'], 'none'>;
export const HOSTILE_KINDS: readonly HostileKind[] = [
  'sops-attack',
  'remote',
  'key-case',
  'laughs',
  'crd-pattern',
  'sops-regex',
];

export interface ArtifactSpec {
  readonly objects: readonly ObjectSpec[];
  readonly sops: readonly SopsSpec[];
  readonly component: boolean;
  readonly generator: boolean;
  /** A CRD whose field has a benign `pattern`, and an object that matches it. */
  readonly crdPattern: boolean;
  /**
   * A ValidatingAdmissionPolicy and its binding refusing ConfigMaps labelled `sluice-soak/refuse`
   * in B's namespace, its message quoting the token of Secret `sec-a` (its parameter).
   */
  readonly policy: boolean;
  /** A ConfigMap the policy refuses. */
  readonly trigger: boolean;
  readonly hostile: Hostile;
}

/** Which generators run: the hostile kinds drawn, and whether pairs quote an earlier revision's Secret. */
export interface GeneratorOptions {
  readonly hostile: readonly HostileKind[];
  readonly quotingPolicy: boolean;
}
export const ALL_GENERATORS: GeneratorOptions = { hostile: HOSTILE_KINDS, quotingPolicy: true };

const objectSpec: fc.Arbitrary<ObjectSpec> = fc.record({
  kind: fc.constantFrom(...KINDS),
  // Mostly B's own and a declared namespace, so most revisions apply; A's and a hand-made one too.
  ns: fc.oneof(
    { weight: 10, arbitrary: fc.constant('mine' as const) },
    { weight: 4, arbitrary: fc.constant('declared' as const) },
    { weight: 1, arbitrary: fc.constant('theirs' as const) },
    { weight: 1, arbitrary: fc.constant('handmade' as const) },
  ),
  name: fc.constantFrom(...NAMES),
  takeover: fc.boolean(),
  pruneDisabled: fc.boolean(),
  force: fc.boolean(),
});
const sopsSpec: fc.Arbitrary<SopsSpec> = fc.record({
  secret: fc.constantFrom('a' as const, 'b' as const),
  field: fc.constantFrom('data' as const, 'stringData' as const),
  dir: fc.constantFrom('root' as const, 'sub' as const),
});

function hostileSpec(kinds: readonly HostileKind[]): fc.Arbitrary<Hostile> {
  const by: Record<HostileKind, fc.Arbitrary<Hostile>> = {
    'sops-attack': fc.record({
      kind: fc.constant('sops-attack' as const),
      attack: fc.constantFrom(...SOPS_ATTACKS),
    }),
    remote: fc.record({
      kind: fc.constant('remote' as const),
      remotes: fc.uniqueArray(fc.constantFrom(...REMOTES), { minLength: 1, maxLength: 2 }),
    }),
    'key-case': fc.record({ kind: fc.constant('key-case' as const), key: fc.constantFrom(...KEY_CASES) }),
    laughs: fc.oneof(
      // Deep and narrow, or three levels wide with a large leaf (the same blow-up in fewer levels).
      fc.record({
        kind: fc.constant('laughs' as const),
        // At most 7 (9^7 leaves): a deeper file, expanded by a faulty build, would take the machine.
        levels: fc.integer({ min: 3, max: 7 }),
        width: fc.constant(9),
        leafBytes: fc.constant(3),
      }),
      fc.record({
        kind: fc.constant('laughs' as const),
        levels: fc.constant(3),
        width: fc.integer({ min: 80, max: 100 }),
        leafBytes: fc.integer({ min: 2048, max: 3072 }),
      }),
    ),
    'crd-pattern': fc.record({
      kind: fc.constant('crd-pattern' as const),
      pattern: fc.constantFrom(...CATASTROPHIC),
    }),
    'sops-regex': fc.record({
      kind: fc.constant('sops-regex' as const),
      regex: fc.constantFrom(...CATASTROPHIC, '^(data)$' as const),
    }),
  };
  const enabled = kinds.map((kind) => by[kind]);
  if (enabled.length === 0) return fc.constant({ kind: 'none' });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: 'none' } as Hostile) },
    { weight: 1, arbitrary: fc.oneof(...enabled) },
  );
}

/** One artifact: mostly plain objects and Secrets that decrypt; a quarter carry one hostile feature. */
export function artifactSpec(options: GeneratorOptions = ALL_GENERATORS): fc.Arbitrary<ArtifactSpec> {
  return fc.record({
    objects: fc.array(objectSpec, { minLength: 1, maxLength: 6 }),
    sops: fc.uniqueArray(sopsSpec, { maxLength: 2, selector: (s) => s.secret }),
    component: fc.boolean(),
    generator: fc.boolean(),
    crdPattern: fc.boolean(),
    policy: fc.constant(false),
    trigger: fc.constant(false),
    hostile: hostileSpec(options.hostile),
  });
}

/**
 * Two revisions of the same delivery: the second prunes what the first alone had. With
 * `quotingPolicy`, a quarter of the pairs apply the policy and Secret `sec-a` in the first (which
 * then carries nothing hostile) and, in the second, the policy and a ConfigMap it refuses, without
 * `sec-a`: the refusal quotes a value the second run did not decrypt.
 */
export function revisionsSpec(
  options: GeneratorOptions = ALL_GENERATORS,
): fc.Arbitrary<readonly [ArtifactSpec, ArtifactSpec]> {
  const one = artifactSpec(options);
  const quoting = options.quotingPolicy
    ? fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
    : fc.constant(false);
  return fc.tuple(one, one, quoting).map(([first, second, quote]) => {
    if (!quote) return [first, second] as const;
    const secA: SopsSpec = first.sops.find((s) => s.secret === 'a') ?? {
      secret: 'a',
      field: 'data',
      dir: 'root',
    };
    return [
      {
        ...first,
        policy: true,
        hostile: { kind: 'none' },
        sops: [secA, ...first.sops.filter((s) => s.secret !== 'a')],
      },
      { ...second, policy: true, trigger: true, sops: second.sops.filter((s) => s.secret !== 'a') },
    ] as const;
  });
}

/** The plaintext of Secret `sec-<secret>`: every value holds the canary. */
export const secretValue = (secret: string, field: string) => `${PLAINTEXT_MARKER}-${secret}-${field}`;

export interface Names {
  readonly tag: string;
  /** Namespace per choice. */
  readonly ns: Record<NamespaceChoice, string>;
  /** The other registered delivery (owner of `theirs`/shared objects). */
  readonly other: string;
  readonly widgetGroup: string;
  readonly leakGroup: string;
  readonly patternGroup: string;
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

/** A CRD whose `spec.code` must match `pattern`, and an object of it holding `code`. */
export function patternObjects(group: string, pattern: string, code: string, namespace: string): Obj[] {
  return [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `patterns.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'patterns', singular: 'pattern', kind: 'Pattern', listKind: 'PatternList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { code: { type: 'string', pattern } } },
                },
              },
            },
          },
        ],
      },
    },
    { apiVersion: `${group}/v1`, kind: 'Pattern', metadata: { name: 'p', namespace }, spec: { code } },
  ];
}

export const REFUSE_LABEL = 'sluice-soak/refuse';

/** The policy and binding of `ArtifactSpec.policy`: ConfigMaps labelled REFUSE_LABEL in `ns` are refused quoting Secret `sec-a`. */
export function quotingPolicy(names: Names): Obj[] {
  const name = `${names.tag}-quote`;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        paramKind: { apiVersion: 'v1', kind: 'Secret' },
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['configmaps'],
            },
          ],
          objectSelector: { matchLabels: { [REFUSE_LABEL]: 'yes' } },
        },
        validations: [
          { expression: 'false', messageExpression: "'refused: ' + string(params.data['token'])" },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        paramRef: { name: 'sec-a', namespace: names.ns.mine, parameterNotFoundAction: 'Allow' },
        matchResources: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': names.ns.mine } },
        },
      },
    },
  ];
}

/** The ConfigMap the quoting policy refuses. */
export const triggerObject = (names: Names): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'refused', namespace: names.ns.mine, labels: { [REFUSE_LABEL]: 'yes' } },
  data: { v: 'x' },
});

const yamlDocs = (objects: readonly unknown[]) => objects.map((o) => stringify(o)).join('---\n');

/** A "billion laughs" document: `levels` levels of `width` aliases each, over a leaf of `leafBytes`. */
export function laughs(levels: number, name: string, width = 9, leafBytes = 3): string {
  const lines = [
    'apiVersion: v1',
    'kind: ConfigMap',
    `metadata: {name: ${name}}`,
    `lol0: &l0 ["${'l'.repeat(leafBytes)}"]`,
  ];
  for (let i = 1; i <= levels; i++)
    lines.push(`lol${i}: &l${i} [${Array.from({ length: width }, () => `*l${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

const KUSTOMIZATION = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' };

/** The encrypted file of one Secret, as sops-encrypt.ts writes it. */
async function secretFile(s: SopsSpec, names: Names, options: { labelKey?: string; editedRegex?: string }) {
  const value = secretValue(s.secret, s.field);
  return sopsEncrypt(
    [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: `sec-${s.secret}`,
          namespace: names.ns.mine,
          ...(options.labelKey && { labels: { [options.labelKey]: 'x' } }),
        },
        type: 'Opaque',
        [s.field]: { token: s.field === 'data' ? Buffer.from(value).toString('base64') : value },
      },
    ],
    { ...(options.editedRegex && { editedRegex: options.editedRegex }) },
  );
}

/**
 * The files of an artifact: a root kustomization listing the objects (in a nested dir), the
 * encrypted Secrets (in the root or a sub-kustomization), a component, a generator, the admission
 * policy, the pattern CRD, and the one hostile feature, plus the CRDs and Namespaces the objects need.
 */
export async function artifactFiles(spec: ArtifactSpec, names: Names): Promise<Record<string, string>> {
  const objects = spec.objects.map((o) => objectOf(o, names));
  const kinds = new Set(spec.objects.map((o) => o.kind));
  const hostile = spec.hostile;
  const extra: Obj[] = [];
  if (kinds.has('Widget')) extra.push(widgetCrd(names.widgetGroup));
  // A namespace `declared` is new: the artifact declares it whenever something lands in it.
  const declaredUsed = spec.objects.some((o) => o.ns === 'declared' && o.kind !== 'ClusterRole');
  const declaresIt = spec.objects.some((o) => o.kind === 'Namespace' && o.ns === 'declared');
  if (declaredUsed && !declaresIt)
    extra.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: names.ns.declared } });
  if (hostile.kind === 'sops-attack' && hostile.attack === 'to-leak') extra.push(leakCrd(names.leakGroup));
  if (hostile.kind === 'crd-pattern')
    extra.push(
      ...patternObjects(names.patternGroup, hostile.pattern, evilInput(EVIL_LENGTH.crd), names.ns.mine),
    );
  else if (spec.crdPattern)
    extra.push(...patternObjects(names.patternGroup, '^[a-z]+(-[a-z]+)*$', 'abc-def', names.ns.mine));
  if (spec.policy) extra.push(...quotingPolicy(names));
  if (spec.trigger) extra.push(triggerObject(names));
  const files: Record<string, string> = {
    'app/objects.yaml': yamlDocs(dedupe([...extra, ...objects])),
    'app/kustomization.yaml': stringify({ ...KUSTOMIZATION, resources: ['objects.yaml'] }),
  };
  const resources: string[] = ['app'];
  const components: string[] = [];
  const kustomization: Record<string, unknown> = { ...KUSTOMIZATION };
  // The hostile moves on Secrets take the first one (or one of their own).
  const sops: SopsSpec[] =
    (hostile.kind === 'sops-attack' || hostile.kind === 'sops-regex') && spec.sops.length === 0
      ? [{ secret: 'b', field: 'stringData', dir: 'sub' }]
      : [...spec.sops];
  for (const [i, s] of sops.entries()) {
    const first = i === 0;
    const attack = first && hostile.kind === 'sops-attack' ? hostile.attack : undefined;
    const regex = first && hostile.kind === 'sops-regex' ? hostile.regex : undefined;
    const file = `sec-${s.secret}.yaml`;
    const text = await secretFile(s, names, {
      ...(regex && { labelKey: evilInput(EVIL_LENGTH.sops, 'b'), editedRegex: regex }),
    });
    const patch = attack && attack !== 'kustomize-namespace' ? patchOps(attack, names) : undefined;
    const patches = patch && [
      { target: { kind: 'Secret', name: `sec-${s.secret}` }, patch: JSON.stringify(patch) },
    ];
    if (s.dir === 'root' && !attack) {
      files[file] = text;
      resources.push(file);
      continue;
    }
    const dir = `secrets-${s.secret}`;
    files[`${dir}/${file}`] = text;
    files[`${dir}/kustomization.yaml`] = stringify({
      ...KUSTOMIZATION,
      // The file's own namespace (accepted), or another one (refused: not the Secret its file declares).
      namespace: attack === 'kustomize-namespace' ? names.ns.handmade : names.ns.mine,
      resources: [file],
      ...(patches && { patches }),
    });
    resources.push(dir);
  }
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
  for (const remote of hostile.kind === 'remote' ? hostile.remotes : []) {
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
  if (hostile.kind === 'key-case') {
    // A sub-kustomization whose list key is spelled as kustomize (case-insensitively) still reads it.
    files['cased/kustomization.yaml'] =
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${hostile.key}:\n- http://${trap}/cased.yaml\n`;
    resources.push('cased');
  }
  if (hostile.kind === 'laughs') {
    files['laughs.yaml'] = laughs(hostile.levels, 'laughs', hostile.width, hostile.leafBytes);
    resources.push('laughs.yaml');
  }
  files['kustomization.yaml'] = stringify({
    ...kustomization,
    resources,
    ...(components.length > 0 && { components }),
  });
  return files;
}

/** Whether an artifact asks kustomize to reach the network (a remote reference, in any spelling). */
export const reachesOut = (spec: ArtifactSpec) =>
  spec.hostile.kind === 'remote' || spec.hostile.kind === 'key-case';

function patchOps(
  patch: Exclude<(typeof SOPS_ATTACKS)[number], 'kustomize-namespace'>,
  names: Names,
): unknown[] {
  switch (patch) {
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
