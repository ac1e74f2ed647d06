import type { KubernetesObject } from '@kubernetes/client-node';
import { groupOf } from './objects.ts';

/** One inventoried object, as Flux records it: id `<namespace>_<name>_<group>_<kind>` and version. */
export interface InventoryEntry {
  readonly id: string;
  readonly v: string;
  /** Hash of the object as last applied; absent while a run that may have created it is unfinished. */
  readonly h?: string;
  /**
   * 1: a CRD or Namespace the revision left out, kept in place because it holds objects the prune
   * did not delete; later runs prune it again once it holds nothing else.
   */
  readonly k?: 1;
}

export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly version: string;
}

export function entryFor(object: KubernetesObject): InventoryEntry {
  const apiVersion = object.apiVersion ?? '';
  const group = groupOf(apiVersion);
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  return {
    id: `${object.metadata?.namespace ?? ''}_${object.metadata?.name}_${group}_${object.kind}`,
    v: version,
  };
}

/** An inventory entry that does not name an object: it can be neither pruned nor declared gone. */
export class InventoryEntryError extends Error {
  override readonly name = 'InventoryEntryError';
  constructor(
    readonly entry: InventoryEntry,
    why: string,
  ) {
    super(`inventory entry '${entry.id}' (version '${entry.v}') cannot be parsed: ${why}`);
  }
}

/**
 * Parses an id as cli-utils' ParseObjMetadata does: namespaces, groups and kinds cannot contain
 * `_`, names can, so the namespace ends at the first `_`, the kind starts after the last, the
 * group sits between the last two and the name is everything in between.
 * Throws InventoryEntryError for an id with too few fields or an empty name, kind or version.
 */
export function refOf(entry: InventoryEntry): ObjectRef {
  const id = entry.id;
  const first = id.indexOf('_');
  const last = id.lastIndexOf('_');
  const beforeLast = last > first ? id.lastIndexOf('_', last - 1) : -1;
  if (first === -1 || beforeLast <= first)
    throw new InventoryEntryError(entry, 'expected <namespace>_<name>_<group>_<kind>');
  const ref: ObjectRef = {
    namespace: id.slice(0, first),
    name: id.slice(first + 1, beforeLast),
    group: id.slice(beforeLast + 1, last),
    kind: id.slice(last + 1),
    version: entry.v ?? '',
  };
  for (const field of ['name', 'kind', 'version'] as const)
    if (!ref[field]) throw new InventoryEntryError(entry, `empty ${field}`);
  return ref;
}

/** `Kind/namespace/name` or `Kind/name`, as describeObject names objects; the raw id if it cannot be parsed. */
export function describeEntry(entry: InventoryEntry): string {
  try {
    const ref = refOf(entry);
    return `${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
  } catch {
    return entry.id;
  }
}

export function apiVersionOf(ref: ObjectRef): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/** Entries of `old` whose id is not in `current`, in `old`'s order. */
export function staleEntries(
  old: readonly InventoryEntry[],
  current: readonly InventoryEntry[],
): InventoryEntry[] {
  const keep = new Set(current.map((entry) => entry.id));
  return old.filter((entry) => !keep.has(entry.id));
}

/** `a` then the entries of `b` not in `a`. */
export function unionEntries(a: readonly InventoryEntry[], b: readonly InventoryEntry[]): InventoryEntry[] {
  const seen = new Set(a.map((entry) => entry.id));
  return [...a, ...b.filter((entry) => !seen.has(entry.id))];
}
