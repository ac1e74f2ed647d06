// How `npm run parity` compares what the two tools left in the cluster: each live object's fields,
// and which fields each tool's field manager owns (`metadata.managedFields`), with each side's
// names, owner labels and generated metadata made comparable.
import { ownership } from '../../test/support/managed-fields.ts';
import type { Side } from './parity-scenarios.ts';

/** A live object as `kubectl get -o json --show-managed-fields` returns it. */
export type Live = Record<string, unknown> & {
  kind: string;
  apiVersion: string;
  metadata: Record<string, unknown>;
};

/** One way the two sides differ: where, and each side's value. */
export interface Difference {
  readonly scenario: string;
  readonly step: string;
  readonly kind: string;
  /** `namespace/name` (with SIDE for each side's prefix), or the delivery's name for readiness. */
  readonly object: string;
  /** A field path (`spec.replicas`), `managedFields[APPLIER].<path>`, `(object)` or `(ready)`. */
  readonly path: string;
  readonly sluice: string;
  readonly flux: string;
}

/** The field manager each tool applies with, compared as one name. */
export const FIELD_MANAGERS: Record<Side, string> = { sluice: 'sluice', flux: 'kustomize-controller' };
const APPLIER = 'APPLIER';

/** The labels and annotations each tool writes itself; user-written ones (Flux's too) are compared. */
const TOOL_METADATA: Record<Side, readonly string[]> = {
  sluice: ['sluice.io/delivery'],
  flux: ['kustomize.toolkit.fluxcd.io/name', 'kustomize.toolkit.fluxcd.io/namespace'],
};
const GENERATED_ANNOTATIONS = new Set(['deployment.kubernetes.io/revision']);
const GENERATED_METADATA = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields'];

/** Each side's names carry its own prefix; the same placeholder stands for both. */
export function sideless(text: string, side: Side): string {
  return text
    .replaceAll(side === 'sluice' ? 'sluice-' : 'flux-', 'SIDE-')
    .replaceAll(side === 'sluice' ? '.sp.' : '.fp.', '.SIDE.');
}

const isToolKey = (key: string, side: Side) => TOOL_METADATA[side].includes(key);

/** The object as compared: generated metadata, the tool's own labels and status removed; names sideless. */
export function normalise(object: Live, side: Side): Live {
  const metadata = { ...object.metadata };
  for (const key of GENERATED_METADATA) delete metadata[key];
  // Terminating on both sides is the same state, whatever the moment each deleted it.
  if (metadata.deletionTimestamp) metadata.deletionTimestamp = 'set';
  delete metadata.deletionGracePeriodSeconds;
  for (const field of ['labels', 'annotations'] as const) {
    const entries = Object.entries((metadata[field] as Record<string, string> | undefined) ?? {}).filter(
      ([key]) => !isToolKey(key, side) && !GENERATED_ANNOTATIONS.has(key),
    );
    if (entries.length > 0) metadata[field] = Object.fromEntries(entries);
    else delete metadata[field];
  }
  const copy: Live = { ...object, metadata };
  delete copy.status;
  if (copy.kind === 'Service') {
    const spec = { ...(copy.spec as Record<string, unknown>) };
    delete spec.clusterIP;
    delete spec.clusterIPs;
    copy.spec = spec;
  }
  return JSON.parse(sideless(JSON.stringify(copy), side)) as Live;
}

/**
 * The field paths each manager owns, the tool's own manager named APPLIER, the paths of the tool's
 * own labels left out, names sideless: `APPLIER (Apply)` → {`spec.replicas`, …}.
 */
export function comparableOwnership(object: Live, side: Side): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  for (const [manager, paths] of ownership(object)) {
    const name = manager.replace(new RegExp(`^${FIELD_MANAGERS[side]} `), `${APPLIER} `);
    const kept = [...paths].filter(
      (path) => !TOOL_METADATA[side].some((key) => path === `metadata.labels.${key}`),
    );
    // Only the tool's label under metadata.labels: the `metadata.labels` map itself is not owned apart.
    result.set(sideless(name, side), new Set(kept.map((path) => sideless(path, side))));
  }
  return result;
}

/** Field paths where the two values differ, each side's value as JSON (`(absent)` if missing). */
export function valueDifferences(
  a: unknown,
  b: unknown,
  path = '',
): { path: string; sluice: string; flux: string }[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys]
      .sort()
      .flatMap((key) =>
        valueDifferences(
          (a as Record<string, unknown>)[key],
          (b as Record<string, unknown>)[key],
          path ? `${path}.${key}` : key,
        ),
      );
  }
  return [{ path, sluice: JSON.stringify(a) ?? '(absent)', flux: JSON.stringify(b) ?? '(absent)' }];
}

/** Paths one manager owns on one side and not on the other; a manager only one side has, all its paths. */
export function ownershipDifferences(
  sluice: Map<string, Set<string>>,
  flux: Map<string, Set<string>>,
): { path: string; sluice: string; flux: string }[] {
  const found: { path: string; sluice: string; flux: string }[] = [];
  for (const manager of [...new Set([...sluice.keys(), ...flux.keys()])].sort()) {
    const [a, b] = [sluice.get(manager) ?? new Set<string>(), flux.get(manager) ?? new Set<string>()];
    for (const path of [...new Set([...a, ...b])].sort()) {
      if (a.has(path) === b.has(path)) continue;
      found.push({
        path: `managedFields[${manager}].${path}`,
        sluice: a.has(path) ? 'owned' : 'not owned',
        flux: b.has(path) ? 'owned' : 'not owned',
      });
    }
  }
  return found;
}

const keyOf = (o: Live) => `${o.kind} ${String(o.metadata.namespace ?? '')}/${String(o.metadata.name)}`;

/** The live objects of both sides, normalised, compared by kind, namespace and name. */
export function compareObjects(
  sluiceLive: readonly Live[],
  fluxLive: readonly Live[],
  where: { scenario: string; step: string },
): Difference[] {
  const index = (objects: readonly Live[], side: Side) =>
    new Map(
      objects.map((o) => {
        const normal = normalise(o, side);
        return [keyOf(normal), { normal, owners: comparableOwnership(o, side) }] as const;
      }),
    );
  const [sluice, flux] = [index(sluiceLive, 'sluice'), index(fluxLive, 'flux')];
  const found: Difference[] = [];
  for (const key of [...new Set([...sluice.keys(), ...flux.keys()])].sort()) {
    const [a, b] = [sluice.get(key), flux.get(key)];
    const { kind, metadata } = (a ?? b)!.normal;
    const object = `${String(metadata.namespace ?? '')}/${String(metadata.name)}`;
    const add = (d: { path: string; sluice: string; flux: string }) =>
      found.push({ ...where, kind, object, ...d });
    if (!a || !b) add({ path: '(object)', sluice: a ? 'present' : 'absent', flux: b ? 'present' : 'absent' });
    else {
      valueDifferences(a.normal, b.normal).forEach(add);
      ownershipDifferences(a.owners, b.owners).forEach(add);
    }
  }
  return found;
}
