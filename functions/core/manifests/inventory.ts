import type { KubernetesObject } from '@kubernetes/client-node';
import { groupOf } from './objects.ts';

/** One inventoried object, as Flux records it: id `<namespace>_<name>_<group>_<kind>` and version. */
export interface InventoryEntry {
  readonly id: string;
  readonly v: string;
  /** Hash of the object as last applied; absent while a run that may have created it is unfinished. */
  readonly h?: string;
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

export function refOf(entry: InventoryEntry): ObjectRef {
  const [namespace = '', name = '', group = '', kind = ''] = entry.id.split('_');
  return { namespace, name, group, kind, version: entry.v };
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
