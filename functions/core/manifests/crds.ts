import type { KubernetesObject } from '@kubernetes/client-node';
import { compileGoRegexp, GoRegexpError } from '../go-regexp.ts';
import { checkCustomResources } from './crd-schema.ts';
import { customResourceMetadataProblems } from './object-meta.ts';
import type { Manifest } from './objects.ts';

/** One version of a CustomResourceDefinition of the artifact. */
export interface CrdVersion {
  /** `v1`, `v1beta1`, ... */
  readonly name: string;
  /** `served: true`: its custom resources can be read and written in this version. */
  readonly served: boolean;
  /** `storage: true`: the version objects are stored in (exactly one has it). */
  readonly storage: boolean;
  /** `schema.openAPIV3Schema`, as written. */
  readonly schema: unknown;
}

/** A CustomResourceDefinition (apiextensions.k8s.io/v1) of the artifact, as its custom resources are checked against it. */
export interface ArtifactCrd {
  /** The file it came from, for messages. */
  readonly origin: string;
  /** `metadata.name`: `<plural>.<group>`. */
  readonly name: string;
  readonly group: string;
  /** `spec.names.kind`. */
  readonly kind: string;
  /** `spec.scope: Namespaced`. */
  readonly namespaced: boolean;
  readonly versions: readonly CrdVersion[];
}

interface CrdSpec {
  readonly group?: unknown;
  readonly scope?: unknown;
  readonly names?: { readonly kind?: unknown };
  readonly versions?: unknown;
}

/** `group/Kind`, as the artifact's CRDs are looked up. */
export const crdKey = (group: string, kind: string) => `${group}/${kind}`;

function versionsOf(spec: CrdSpec): CrdVersion[] {
  if (!Array.isArray(spec.versions)) return [];
  return spec.versions
    .filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null)
    .map((v) => ({
      name: String(v.name),
      served: v.served === true,
      storage: v.storage === true,
      schema: (v.schema as { openAPIV3Schema?: unknown } | undefined)?.openAPIV3Schema,
    }));
}

/** What the API server would refuse in a CRD's versions, cheap to know without it (it dry-runs the CRD too). */
function versionProblems(versions: readonly CrdVersion[]): string[] {
  if (versions.length === 0) return ['spec.versions: Required value: must have at least one version'];
  const problems: string[] = [];
  const storage = versions.filter((v) => v.storage).length;
  if (storage !== 1)
    problems.push(
      `spec.versions: Invalid value: must have exactly one version marked as storage version, not ${storage}`,
    );
  const names = versions.map((v) => v.name);
  for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i)))
    problems.push(`spec.versions: Duplicate value: "${name}"`);
  versions.forEach((v, i) => {
    if (typeof v.schema !== 'object' || v.schema === null)
      problems.push(`spec.versions[${i}].schema.openAPIV3Schema: Required value: schemas are required`);
    else patternProblems(v.schema, `spec.versions[${i}].schema.openAPIV3Schema`, problems);
  });
  return problems;
}

const isNode = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Each `pattern` of a schema that Go's regexp does not compile, as the API server refuses the CRD
 * for it. A pattern past sluice's bounds (REGEXP_LIMITS) is left to the API server's dry-run.
 */
function patternProblems(node: unknown, path: string, problems: string[]): void {
  if (!isNode(node)) return;
  if (typeof node.pattern === 'string') {
    try {
      compileGoRegexp(node.pattern);
    } catch (error) {
      if (!(error instanceof GoRegexpError)) throw error;
      if (error.reason === 'syntax')
        problems.push(
          `${path}.pattern: Invalid value: ${JSON.stringify(node.pattern)}: must be a valid regular expression, but isn't: ${error.message}`,
        );
    }
  }
  if (isNode(node.properties))
    for (const [key, child] of Object.entries(node.properties))
      patternProblems(child, `${path}.properties[${key}]`, problems);
  patternProblems(node.items, `${path}.items`, problems);
  patternProblems(node.additionalProperties, `${path}.additionalProperties`, problems);
  patternProblems(node.not, `${path}.not`, problems);
  for (const junctor of ['allOf', 'anyOf', 'oneOf'])
    if (Array.isArray(node[junctor]))
      node[junctor].forEach((child, i) => patternProblems(child, `${path}.${junctor}[${i}]`, problems));
}

/**
 * The CRDs of the artifact by `group/Kind`, and what is wrong with them (each problem naming
 * the file and the CRD).
 */
export function artifactCrds(manifests: readonly Manifest[]): {
  crds: Map<string, ArtifactCrd>;
  problems: string[];
} {
  const crds = new Map<string, ArtifactCrd>();
  const problems: string[] = [];
  for (const { object, origin } of manifests) {
    if (object.kind !== 'CustomResourceDefinition' || object.apiVersion !== 'apiextensions.k8s.io/v1')
      continue;
    const spec = (object.spec ?? {}) as CrdSpec;
    const name = String(object.metadata?.name);
    const versions = versionsOf(spec);
    for (const problem of versionProblems(versions))
      problems.push(`${origin}: CustomResourceDefinition/${name}: ${problem}`);
    if (typeof spec.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
    const key = crdKey(spec.group, spec.names.kind);
    if (crds.has(key)) continue;
    crds.set(key, {
      origin,
      name,
      group: spec.group,
      kind: spec.names.kind,
      namespaced: spec.scope === 'Namespaced',
      versions,
    });
  }
  return { crds, problems };
}

const versionOf = (apiVersion: string) => apiVersion.slice(apiVersion.indexOf('/') + 1);

/**
 * Why a custom resource's apiVersion will not be served once its CRD (in the artifact) is
 * applied: the version is not one of the CRD's, or is one with `served: false`.
 */
export function crdVersionProblem(object: KubernetesObject, crd: ArtifactCrd): string | undefined {
  const version = versionOf(object.apiVersion ?? '');
  const found = crd.versions.find((v) => v.name === version);
  const where = `CustomResourceDefinition ${crd.name} (${crd.origin})`;
  if (!found) {
    const known = crd.versions.map((v) => v.name).join(', ') || 'none';
    return `apiVersion ${object.apiVersion} is not a version of ${where}, which defines ${known}`;
  }
  if (!found.served) return `apiVersion ${object.apiVersion} is not served by ${where} (served: false)`;
  return undefined;
}

/** A custom resource to check, with the CRD of the artifact that defines its kind. */
export interface CustomResource {
  /** As it will be applied (namespace settled, owner label stamped). */
  readonly object: KubernetesObject;
  /** The CRD of the artifact that defines its kind. */
  readonly crd: ArtifactCrd;
}

/**
 * What the API server would refuse in each custom resource (in order), each problem naming its
 * field: metadata rules, and the schema of its version in its CRD. The resources of one CRD
 * version are checked together, so that schema is compiled once.
 */
export function customResourceProblems(resources: readonly CustomResource[]): string[][] {
  const problems = resources.map(({ object }) => customResourceMetadataProblems(object.metadata));
  const byVersion = new Map<string, { schema: unknown; at: number[] }>();
  resources.forEach(({ object, crd }, i) => {
    const version = crd.versions.find((v) => v.name === versionOf(object.apiVersion ?? ''));
    if (!version) return;
    const key = `${crdKey(crd.group, crd.kind)}/${version.name}`;
    const group = byVersion.get(key) ?? { schema: version.schema, at: [] };
    group.at.push(i);
    byVersion.set(key, group);
  });
  for (const { schema, at } of byVersion.values()) {
    const issues = checkCustomResources(
      schema,
      at.map((i) => resources[i]!.object),
    );
    at.forEach((i, n) => problems[i]!.push(...issues[n]!.map(({ path, message }) => `${path}: ${message}`)));
  }
  return problems;
}
