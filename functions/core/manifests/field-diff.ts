/** One field that differs between two versions of an object. */
export interface FieldChange {
  /** `spec.template.spec.containers[0].image` */
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
  /** A Secret's value changed: the values themselves are left out. */
  readonly redacted?: true;
}

/** Fields the API server maintains itself; a change in them is not a change anyone made. */
const SERVER_FIELDS = new Set([
  'metadata.managedFields',
  'metadata.resourceVersion',
  'metadata.generation',
  'metadata.uid',
  'metadata.creationTimestamp',
  'status',
]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const part = /^[A-Za-z_][\w-]*$/.test(key) ? key : JSON.stringify(key);
  return path === '' ? part : `${path}.${part}`;
}

/** Every leaf that differs between `before` and `after`, in path order, server-maintained fields left out. */
export function fieldChanges(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (SERVER_FIELDS.has(path)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => fieldChanges(before[key], after[key], join(path, key)));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, i) => fieldChanges(before[i], after[i], join(path, i))).flat();
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [
    {
      path,
      ...(before !== undefined && { before }),
      ...(after !== undefined && { after }),
    },
  ];
}

/** Whether `object` is a Secret of the core API. */
const isSecret = (object: { apiVersion?: string; kind?: string }): boolean =>
  object.apiVersion === 'v1' && object.kind === 'Secret';

/** The changes of `object` with a Secret's values (`data`, `stringData`) reduced to which keys changed. */
export function withoutSecretValues(
  object: { apiVersion?: string; kind?: string },
  changes: readonly FieldChange[],
): FieldChange[] {
  if (!isSecret(object)) return [...changes];
  return changes.map((change) =>
    /^(data|stringData)(\.|\[|$)/.test(change.path) ? { path: change.path, redacted: true } : change,
  );
}
