import type { z } from 'zod';

/** One problem in a config: `path` reads like `deliveries[oddy-test].source.url` ('' for the whole input). */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** A config that does not validate; the message lists every problem, one per line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    /** Where the config came from: a file name, `config`, `delivery oddy-test`, … */
    readonly origin: string,
    readonly issues: ConfigIssue[],
  ) {
    super(issues.map((issue) => formatIssue(origin, issue)).join('\n'));
  }
}

export function formatIssue(origin: string, issue: ConfigIssue): string {
  return [origin, issue.path, issue.message].filter((part) => part !== '').join(': ');
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Formats a path inside `root` for people: list items that have a unique, valid `name` are shown by
 * that name (`deliveries[oddy-test]`), others by index (`deliveries[0]`).
 */
export function formatPath(path: readonly PropertyKey[], root: unknown): string {
  let out = '';
  let current: unknown = root;
  for (const segment of path) {
    if (typeof segment === 'number') {
      const list = Array.isArray(current) ? current : [];
      const name = nameOf(list[segment]);
      const unique = name !== undefined && list.filter((item) => nameOf(item) === name).length === 1;
      out += `[${unique ? name : segment}]`;
    } else {
      const key = String(segment);
      out += IDENTIFIER.test(key) ? `${out === '' ? '' : '.'}${key}` : `[${JSON.stringify(key)}]`;
    }
    current =
      isRecord(current) || Array.isArray(current)
        ? (current as Record<PropertyKey, unknown>)[segment]
        : undefined;
  }
  return out;
}

function nameOf(item: unknown): string | undefined {
  return isRecord(item) && typeof item.name === 'string' && item.name.length <= 63 && LABEL.test(item.name)
    ? item.name
    : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Turns zod issues into config issues, one line per problem. */
export function toConfigIssues(issues: readonly z.core.$ZodIssue[], root: unknown): ConfigIssue[] {
  const seen = new Set<string>();
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const path = formatPath(issue.path, root);
    for (const message of issue.message.split('\n')) {
      const key = `${path}\0${message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ path, message });
    }
  }
  return out;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
};

/** A readable description of a value in a message: `"abc"`, `the number 5`, `a list`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return `the ${typeof value} ${String(value)}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** The per-parse zod error map: human sentences for the generic issues (schemas add their own). */
export const issueMessage: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `unknown field "${key}"`).join('\n');
  if (issue.code === 'custom') return undefined;
  if (issue.input === undefined) return 'is required';
  if (issue.code === 'invalid_type') {
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    if (issue.input === null) return `has no value (expected ${expected})`;
    const quote =
      issue.expected === 'string' && ['number', 'boolean'].includes(typeof issue.input)
        ? ` (quote it in YAML: "${String(issue.input)}")`
        : '';
    return `must be ${expected}, not ${describeValue(issue.input)}${quote}`;
  }
  if (issue.code === 'invalid_value') {
    return `must be one of ${issue.values.map(String).join(', ')}, not ${describeValue(issue.input)}`;
  }
  if (issue.code === 'too_small' && issue.origin === 'string') return 'must not be empty';
  if (issue.code === 'too_big' && issue.origin === 'string') {
    return `must be at most ${String(issue.maximum)} characters`;
  }
  return undefined;
};

/** The candidate closest to `word` (ignoring case, `-` and `_`), if it is close enough to be a typo. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const target = norm(word);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = levenshtein(target, norm(candidate));
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(1, Math.floor(target.length * 0.4)) ? best : undefined;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}
