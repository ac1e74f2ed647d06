import { isRecord } from '../config/issues.ts';

/**
 * The shape of a Go type as encoding/json decodes it. kustomize reads kustomization files (and
 * builtin plugin configs) with sigs.k8s.io/yaml, which turns the YAML into JSON and decodes that
 * with encoding/json, so these are the rules sluice must read them by.
 */
export type Shape =
  | 'string'
  | 'bool'
  | 'int'
  | { readonly list: Shape }
  /** map[string]string or map[string]bool: keys are matched exactly (a map, not a struct). */
  | { readonly map: 'string' | 'bool'; readonly keys?: readonly string[] }
  /** A struct (or *struct with `pointer`): its keys are matched as encoding/json matches them. */
  | { readonly struct: Readonly<Record<string, Shape>>; readonly pointer?: boolean }
  /** A field sluice refuses whatever it holds. */
  | { readonly refused: string };

/**
 * encoding/json's key folding (Go 1.21+ `foldName`: ASCII case, and Unicode simple folding, under
 * which only U+017F `ſ` and U+212A `K` fold onto ASCII letters; measured over every rune).
 */
export function goFold(key: string): string {
  // Other runes stay as they are: they can match no field name, which are all ASCII.
  return key.replace(/[A-Z\u017f\u212a]/g, (c) => FOLDED[c] ?? c.toLowerCase());
}

const FOLDED: Record<string, string> = { '\u017f': 's', '\u212a': 'k' };

/** Go marshals a map's keys sorted by their UTF-8 bytes: the order sigs.k8s.io/yaml hands them on. */
const byUtf8 = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** What a decode found: the value as kustomize holds it, and where each field and entry was written. */
export interface Decoded {
  readonly problems: string[];
  /** canonical path (`resources[0]`) → the key path as written (`Resources[0]`). */
  readonly written: Map<string, string>;
}

/**
 * `value` decoded into `shape` as encoding/json decodes it into an existing value: struct keys
 * matched exactly, else case-insensitively; keys visited in sorted order, so of keys differing
 * only in case the last sorted one wins a string or list of strings, while maps and structs merge.
 * Anything outside the shape is a problem (deny by default), named by its key as written.
 * `fold: false` matches keys exactly, as kyaml (go-yaml v3) does for the plugins decoded with it.
 */
export function decode(
  shape: Shape,
  value: unknown,
  existing: unknown,
  at: Place,
  out: Decoded,
  fold = true,
): unknown {
  if (typeof shape === 'string') return scalar(shape, value, existing, at, out);
  if ('refused' in shape) {
    out.problems.push(`${at.written} ${shape.refused}`);
    return existing;
  }
  if (value === null) return 'struct' in shape && !shape.pointer ? existing : undefined;
  if ('list' in shape) {
    if (!Array.isArray(value)) return fail(out, at, 'must be a list');
    const result: unknown[] = Array.isArray(existing) ? [...(existing as unknown[])] : [];
    value.forEach((item, i) => {
      const place = { canonical: `${at.canonical}[${i}]`, written: `${at.written}[${i}]` };
      out.written.set(place.canonical, place.written);
      result[i] = decode(shape.list, item, result[i], place, out, fold);
    });
    result.length = value.length;
    return result;
  }
  if (!isRecord(value)) return fail(out, at, 'must be a mapping');
  if ('map' in shape) {
    const result: Record<string, unknown> = isRecord(existing) ? { ...existing } : {};
    for (const [key, item] of Object.entries(value)) {
      const place = { canonical: `${at.canonical}.${key}`, written: `${at.written}.${key}` };
      out.written.set(place.canonical, place.written);
      if (shape.keys && !shape.keys.includes(key)) {
        out.problems.push(`${place.written} is not a key sluice knows (only ${shape.keys.join(', ')})`);
        continue;
      }
      result[key] = scalar(shape.map, item, undefined, place, out);
    }
    return result;
  }
  const result: Record<string, unknown> = isRecord(existing) ? { ...existing } : {};
  const fields = Object.keys(shape.struct);
  for (const key of Object.keys(value).sort(byUtf8)) {
    const field = fields.includes(key)
      ? key
      : fold
        ? fields.find((name) => goFold(name) === goFold(key))
        : undefined;
    const written = at.written === '' ? key : `${at.written}.${key}`;
    if (field === undefined) {
      out.problems.push(`${written} is not a field sluice knows: refused`);
      continue;
    }
    const place = { canonical: at.canonical === '' ? field : `${at.canonical}.${field}`, written };
    const fieldShape = shape.struct[field]!;
    if (typeof fieldShape === 'object' && 'list' in fieldShape && typeof fieldShape.list === 'object') {
      // encoding/json reuses a slice's backing array: a third key for one list of objects can bring
      // back entries of the first. Two keys merge entry by entry, as below.
      const count = Object.keys(value).filter((other) => goFold(other) === goFold(field)).length;
      if (count > 2) {
        out.problems.push(`${written}: ${count} keys set ${field}; refused`);
        continue;
      }
    }
    out.written.set(place.canonical, written);
    result[field] = decode(fieldShape, value[key], result[field], place, out, fold);
  }
  return result;
}

export interface Place {
  readonly canonical: string;
  readonly written: string;
}

function scalar(
  shape: 'string' | 'bool' | 'int',
  value: unknown,
  existing: unknown,
  at: Place,
  out: Decoded,
) {
  if (value === null) return existing; // encoding/json: null into a string, bool or number is a no-op
  const ok =
    shape === 'string'
      ? typeof value === 'string'
      : shape === 'bool'
        ? typeof value === 'boolean'
        : Number.isInteger(value);
  if (!ok)
    return fail(
      out,
      at,
      `must be ${shape === 'int' ? 'an integer' : `a ${shape === 'bool' ? 'boolean' : 'string'}`}`,
    );
  return value;
}

function fail(out: Decoded, at: Place, problem: string): undefined {
  out.problems.push(`${at.written || '(document)'} ${problem}`);
  return undefined;
}
