// Field ownership as the API server records it (`metadata.managedFields`, FieldsV1), decoded to
// readable paths: `spec.ports[port=80,protocol=TCP].protocol`. Used by tests and `npm run parity`.

interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly subresource?: string;
  readonly fieldsV1?: Record<string, unknown>;
}

type Fields = Record<string, unknown>;

/** `k:{"port":80,"protocol":"TCP"}` → `[port=80,protocol=TCP]`; `v:"a"` → `[="a"]`; `i:0` → `[0]`. */
function segment(key: string): string {
  const [kind, rest] = [key.slice(0, 2), key.slice(2)];
  if (kind === 'f:') return `.${rest}`;
  if (kind === 'i:') return `[${rest}]`;
  if (kind === 'v:') return `[=${rest}]`;
  if (kind === 'k:') {
    const parsed = JSON.parse(rest) as Record<string, unknown>;
    return `[${Object.entries(parsed)
      .map(([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(',')}]`;
  }
  throw new Error(`managedFields: unknown FieldsV1 key '${key}'`);
}

/**
 * The paths a FieldsV1 set owns: each field owned as a whole (a leaf, `{}`) and each map or list
 * item owned itself (`.`); the paths to them are not listed apart.
 */
export function fieldPaths(fields: Fields | undefined, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [key, value] of Object.entries(fields ?? {})) {
    if (key === '.') {
      paths.push(prefix);
      continue;
    }
    const path = `${prefix}${segment(key)}`.replace(/^\./, '');
    const children = (value ?? {}) as Fields;
    if (Object.keys(children).length === 0) paths.push(path);
    else paths.push(...fieldPaths(children, path));
  }
  return paths.sort();
}

/** The field paths each manager owns, by `manager (Operation[ subresource])`. */
export function ownership(object: {
  metadata?: { managedFields?: readonly ManagedFieldsEntry[] };
}): Map<string, Set<string>> {
  const owned = new Map<string, Set<string>>();
  for (const entry of object.metadata?.managedFields ?? []) {
    const key = `${entry.manager ?? '?'} (${entry.operation ?? '?'}${entry.subresource ? ` ${entry.subresource}` : ''})`;
    const paths = owned.get(key) ?? new Set<string>();
    for (const path of fieldPaths(entry.fieldsV1)) paths.add(path);
    owned.set(key, paths);
  }
  return owned;
}

/** The field paths `manager` owns by server-side apply (empty when it owns none). */
export function appliedBy(
  object: { metadata?: { managedFields?: readonly ManagedFieldsEntry[] } },
  manager: string,
): string[] {
  return [...(ownership(object).get(`${manager} (Apply)`) ?? [])].sort();
}
