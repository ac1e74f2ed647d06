import type { Shape } from './go-json-decode.ts';

// The Go types kustomize v5.6 (sigs.k8s.io/kustomize/api v0.19, in kubectl 1.33) decodes a
// kustomization file and its builtin plugin configs into, with their JSON names. Embedded structs
// (`json:",inline"`) are flattened, as encoding/json promotes their fields.

const S = 'string' as const;
const strings: Shape = { list: S };
const stringMap: Shape = { map: 'string' };
const struct = (fields: Record<string, Shape>, pointer = false): Shape => ({ struct: fields, pointer });
const HELM: Shape = { refused: 'is not supported: sluice does not run helm' };

const gvk = { group: S, version: S, kind: S };
const resId = { ...gvk, name: S, namespace: S };
const metaFields = { name: S, namespace: S, labels: stringMap, annotations: stringMap };
const objectMeta = struct(metaFields);
const selector = struct({ ...resId, annotationSelector: S, labelSelector: S }, true);
const fieldSpecs: Shape = { list: struct({ ...gvk, path: S, create: 'bool' }) };
const fieldOptions = struct({ delimiter: S, index: 'int', encoding: S, create: 'bool' }, true);
const patch = struct({ path: S, patch: S, target: selector, options: { map: 'bool' } });
const image = struct({ name: S, newName: S, tagSuffix: S, newTag: S, digest: S });
const replica = struct({ name: S, count: 'int' });
const generatorOptions = struct(
  { labels: stringMap, annotations: stringMap, disableNameSuffixHash: 'bool', immutable: 'bool' },
  true,
);
const generatorArgs = {
  namespace: S,
  name: S,
  behavior: S,
  literals: strings,
  files: strings,
  envs: strings,
  env: S,
  options: generatorOptions,
};
const replacementField = struct({
  source: struct({ ...resId, fieldPath: S, options: fieldOptions }, true),
  targets: {
    list: struct(
      {
        select: selector,
        reject: { list: selector },
        fieldPaths: strings,
        options: fieldOptions,
      },
      true,
    ),
  },
  path: S,
});

/** types.Kustomization. */
export const KUSTOMIZATION: Shape = struct({
  kind: S,
  apiVersion: S,
  metadata: struct(metaFields, true),
  openapi: { map: 'string', keys: ['path', 'version'] },
  namePrefix: S,
  nameSuffix: S,
  namespace: S,
  commonLabels: stringMap,
  labels: {
    list: struct({
      pairs: stringMap,
      includeSelectors: 'bool',
      includeTemplates: 'bool',
      fields: fieldSpecs,
    }),
  },
  commonAnnotations: stringMap,
  patchesStrategicMerge: strings,
  patchesJson6902: { list: patch },
  patches: { list: patch },
  images: { list: image },
  imageTags: { list: image },
  replacements: { list: replacementField },
  replicas: { list: replica },
  vars: {
    list: struct({
      name: S,
      objref: struct({ apiVersion: S, ...gvk, name: S, namespace: S }),
      fieldref: struct({ fieldPath: S }),
    }),
  },
  sortOptions: struct(
    {
      order: S,
      legacySortOptions: struct({ orderFirst: strings, orderLast: strings }, true),
    },
    true,
  ),
  resources: strings,
  components: strings,
  crds: strings,
  bases: strings,
  configMapGenerator: { list: struct(generatorArgs) },
  secretGenerator: { list: struct({ ...generatorArgs, type: S }) },
  helmGlobals: HELM,
  helmCharts: HELM,
  helmChartInflationGenerator: HELM,
  generatorOptions,
  configurations: strings,
  generators: strings,
  transformers: strings,
  validators: { refused: 'is not supported: sluice runs no validators' },
  buildMetadata: strings,
});

/**
 * The builtin plugins sluice understands as generator or transformer configs (`apiVersion:
 * builtin`), each as its plugin struct. kustomize decodes them with sigs.k8s.io/yaml too, so their
 * keys fold as a kustomization's do; `apiVersion`, `kind` and `metadata` are read exactly (kyaml).
 */
/** Builtin plugins that decode their config with kyaml (go-yaml v3): keys matched exactly. */
export const EXACT_KEY_PLUGINS: ReadonlySet<string> = new Set(['PrefixTransformer', 'SuffixTransformer']);

/** The `metadata` of a plugin config, read by kyaml. */
export const PLUGIN_METADATA: Shape = objectMeta;

export const BUILTIN_PLUGINS: Readonly<Record<string, Shape>> = {
  PatchTransformer: struct({ path: S, patch: S, target: selector, options: { map: 'bool' } }),
  PatchStrategicMergeTransformer: struct({ paths: strings, patches: S }),
  PatchJson6902Transformer: struct({ target: selector, path: S, jsonOp: S }),
  ConfigMapGenerator: struct({ metadata: objectMeta, ...generatorArgs }),
  SecretGenerator: struct({ metadata: objectMeta, ...generatorArgs, type: S }),
  LabelTransformer: struct({ labels: stringMap, fieldSpecs }),
  AnnotationsTransformer: struct({ annotations: stringMap, fieldSpecs }),
  PrefixTransformer: struct({ prefix: S, fieldSpecs }),
  SuffixTransformer: struct({ suffix: S, fieldSpecs }),
  NamespaceTransformer: struct({
    metadata: objectMeta,
    fieldSpecs,
    unsetOnly: 'bool',
    setRoleBindingSubjects: S,
  }),
  ImageTagTransformer: struct({ imageTag: image, fieldSpecs }),
  ReplicaCountTransformer: struct({ replica, fieldSpecs }),
  ReplacementTransformer: struct({ replacements: { list: replacementField } }),
};
