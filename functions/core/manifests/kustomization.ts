import { posix } from 'node:path';
import { isScalar, parseAllDocuments, parseDocument, visit, type Document } from 'yaml';
import { SluiceError } from '../errors.ts';
import { isRecord } from '../config/issues.ts';
import { decode, goFold, type Decoded } from './go-json-decode.ts';
import {
  BUILTIN_PLUGINS,
  EXACT_KEY_PLUGINS,
  KUSTOMIZATION,
  PLUGIN_METADATA,
} from './kustomization-shapes.ts';

/** The names kustomize looks for in a directory, in its order. */
const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

const MAX_LISTED = 10;

const REMOTE = 'is remote';
/** `https://`, `ssh://`, `file://`, … */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** `git::…`, `git@github.com:org/repo`, `user@host:path` */
const GIT_FORMS = /^(git::|git@|[\w.-]+@[\w.-]+:|[\w-]+(\.[\w-]+)+:(?!\d+\/?$)[^/]|[A-Za-z][\w+.-]*::)/;
/** kustomize's remote-target query parameters. */
const REMOTE_QUERY = /\?(?:.*&)?(ref|version|submodules|timeout)=/;
/** `github.com/org/repo/…`: a host name as the first path segment. */
const HOST_FIRST = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(:\d+)?\//;

/** `dir/kustomization.yaml` (or `.yml`, or `Kustomization`) if the artifact has one in `dir`. */
export function kustomizationIn(files: ReadonlyMap<string, Buffer>, dir: string): string | undefined {
  return KUSTOMIZATION_FILES.map((name) => (dir === '' ? name : `${dir}/${name}`)).find((file) =>
    files.has(file),
  );
}

/** `overlays/prod` for `./overlays//prod/`, `''` for the artifact root. */
export function artifactDir(path: string): string {
  const normal = posix.normalize(path).replace(/\/+$/, '');
  return normal === '.' ? '' : normal;
}

/** How kustomize uses a reference: a file it reads, a directory it builds, or a plugin config. */
type Use = 'file' | 'file-or-directory' | 'directory' | 'plugin';

/** A reference from one kustomization file: where it is (`resources[2]`, as written) and what it says. */
interface Reference {
  readonly field: string;
  readonly value: string;
  readonly use: Use;
  /** Refused whatever the value says. */
  readonly problem?: string;
}

/**
 * Reads every kustomization reachable from `dir` as kustomize reads it (its keys matched as
 * encoding/json matches them: case-insensitively, the last of keys differing only in case winning)
 * and refuses, before kustomize runs, a build that would reach outside the artifact: remote bases,
 * resources, components or files (URLs, `github.com/...`, `git::`, `?ref=`), absolute paths, `..`
 * paths that leave the artifact root, and every key, field or plugin sluice does not know (deny
 * by default). The error names each file and entry.
 */
export function inspectKustomizations(files: ReadonlyMap<string, Buffer>, dir: string): KustomizationInfo {
  const problems: string[] = [];
  const seen = new Set<string>();
  const read = new Set<string>();
  const queue = [dir];
  let originAnnotations = false;
  let rootSortOptions: unknown;
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (seen.has(current)) continue;
    seen.add(current);
    const file = kustomizationIn(files, current);
    if (!file) continue;
    read.add(file);
    const { kustomization, decoded } = readKustomization(files, file);
    problems.push(...decoded.problems.map((problem) => `${file}: ${problem}`));
    if (current === dir) rootSortOptions = kustomization.sortOptions;
    if (strings(kustomization.buildMetadata).includes('originAnnotations')) originAnnotations = true;
    const named = (reference: Reference): Reference => ({
      ...reference,
      field: decoded.written.get(reference.field) ?? reference.field,
    });
    /** A reference kustomize may follow: its file is read; a problem refuses the build. */
    const admit = (reference: Reference, where: string): string | undefined => {
      const problem = referenceProblem(files, current, reference);
      const quoted = reference.problem === undefined ? `"${reference.value}"` : '';
      if (problem) {
        problems.push(`${where}: ${[reference.field, quoted, problem].filter(Boolean).join(' ')}`);
        return undefined;
      }
      const target = artifactDir(posix.join(current || '.', reference.value));
      if (files.has(target)) read.add(target);
      return target;
    };
    for (const reference of [...referencesOf(kustomization)].map(named)) {
      const target = admit(reference, file);
      if (target === undefined) continue;
      const isFile = files.has(target);
      if (reference.use === 'directory' || (reference.use === 'file-or-directory' && !isFile)) {
        queue.push(target);
      } else if (reference.use === 'plugin' && isFile) {
        for (const inner of pluginFileReferences(files, target))
          admit(inner, `${target} (${reference.field})`);
      } else if (reference.use === 'plugin' && isDirectory(files, target)) {
        problems.push(
          `${file}: ${reference.field} "${reference.value}" is a directory; sluice reads generator and transformer configs only from files or inline`,
        );
      }
    }
    for (const inner of [...inlinePluginReferences(kustomization)].map(named)) admit(inner, file);
  }
  if (problems.length > 0) {
    problems.splice(0, problems.length, ...new Set(problems));
    const more = problems.length > MAX_LISTED ? ` (and ${problems.length - MAX_LISTED} more)` : '';
    const advice = problems.some((problem) => problem.endsWith(REMOTE))
      ? '. The artifact must be self-contained: vendor remote bases into it and refer to them by relative paths'
      : '';
    throw new SluiceError('BuildFailed', `${problems.slice(0, MAX_LISTED).join('; ')}${more}${advice}`);
  }
  return { originAnnotations, rootSortOptions, dirs: [...seen], files: [...read].sort() };
}

/** What the build needs to know about the kustomizations it checked. */
export interface KustomizationInfo {
  /** Some kustomization asks for `buildMetadata: [originAnnotations]` itself: keep them in the output. */
  readonly originAnnotations: boolean;
  /** The root kustomization's `sortOptions`, which only apply at the top of a build. */
  readonly rootSortOptions: unknown;
  /** Every directory the build reaches (`''` for the artifact root). */
  readonly dirs: readonly string[];
  /** Every artifact file kustomize may read: the kustomizations and the files they name. */
  readonly files: readonly string[];
}

function readKustomization(
  files: ReadonlyMap<string, Buffer>,
  file: string,
): { kustomization: Record<string, unknown>; decoded: Decoded } {
  const document = parseDocument(files.get(file)!.toString('utf8'));
  const error = document.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    const problem = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new SluiceError(
      'BuildFailed',
      `${file}:${at ? ` line ${at.line}, column ${at.col}:` : ''} invalid YAML: ${problem}`,
    );
  }
  const merge = lineBreakProblem(files.get(file)!.toString('utf8')) ?? mergeKeyProblem(document);
  if (merge) throw new SluiceError('BuildFailed', `${file}: ${merge}`);
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  const decoded: Decoded = { problems: [], written: new Map() };
  if (value === null || value === undefined) return { kustomization: {}, decoded };
  if (!isRecord(value))
    throw new SluiceError('BuildFailed', `${file}: a kustomization must be a YAML object`);
  const kustomization = decode(KUSTOMIZATION, value, {}, { canonical: '', written: '' }, decoded);
  return { kustomization: kustomization as Record<string, unknown>, decoded };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
const records = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value) ? value.filter(isRecord) : [];

function isDirectory(files: ReadonlyMap<string, Buffer>, dir: string): boolean {
  if (dir === '') return true;
  for (const file of files.keys()) if (file.startsWith(`${dir}/`)) return true;
  return false;
}

/** The references of a decoded kustomization (field names canonical: `resources[0]`). */
function* referencesOf(kustomization: Record<string, unknown>): Generator<Reference> {
  const list = (field: string, use: Use) =>
    strings(kustomization[field]).map((value, i) => ({ field: `${field}[${i}]`, value, use }));
  yield* list('resources', 'file-or-directory');
  yield* list('bases', 'file-or-directory');
  yield* list('components', 'directory');
  yield* list('crds', 'file');
  yield* list('configurations', 'file');
  // A patch inline or a file: kustomize tries it as a patch first, then as a path.
  yield* list('patchesStrategicMerge', 'file').filter(({ value }) => !value.includes('\n'));
  for (const field of ['patches', 'patchesJson6902', 'replacements'])
    for (const [i, entry] of records(kustomization[field]).entries())
      if (typeof entry.path === 'string')
        yield { field: `${field}[${i}].path`, value: entry.path, use: 'file' };
  for (const field of ['configMapGenerator', 'secretGenerator'])
    for (const [i, generator] of records(kustomization[field]).entries())
      yield* generatorReferences(generator, `${field}[${i}]`);
  const openapi = kustomization.openapi;
  if (isRecord(openapi) && typeof openapi.path === 'string')
    yield { field: 'openapi.path', value: openapi.path, use: 'file' };
  for (const field of ['generators', 'transformers'])
    for (const [i, entry] of strings(kustomization[field]).entries()) {
      const inline = inlineConfigs(entry);
      // kustomize reads an entry as inline YAML first, as a path only if that fails.
      if (typeof inline === 'string')
        yield { field: `${field}[${i}]`, value: '', use: 'file', problem: inline };
      else if (inline === undefined && !entry.includes('\n'))
        yield { field: `${field}[${i}]`, value: entry, use: 'plugin' };
      else if (inline === undefined)
        yield {
          field: `${field}[${i}]`,
          value: '',
          use: 'file',
          problem: 'is neither a path nor YAML sluice can read',
        };
    }
}

/** The references inside inline generator and transformer configs. */
function* inlinePluginReferences(kustomization: Record<string, unknown>): Generator<Reference> {
  for (const field of ['generators', 'transformers'])
    for (const [i, entry] of strings(kustomization[field]).entries()) {
      const configs = inlineConfigs(entry);
      if (configs === undefined || typeof configs === 'string') continue;
      for (const [d, config] of configs.entries()) {
        const at = configs.length > 1 ? `${field}[${i}] (document ${d + 1})` : `${field}[${i}]`;
        for (const reference of pluginReferences(config))
          yield { ...reference, field: `${at}.${reference.field}` };
      }
    }
}

/**
 * An entry's inline YAML documents when it is inline YAML (every document a mapping or text that
 * is not a plain path), else undefined: a one-line string that reads as a plain string is a path.
 * A string: why the inline YAML is refused.
 */
function inlineConfigs(entry: string): unknown[] | string | undefined {
  const documents = parseAllDocuments(entry);
  const list = Array.isArray(documents) ? documents : [documents];
  if (list.some((document) => document.errors.length > 0)) return undefined;
  const merge = lineBreakProblem(entry) ?? list.map(mergeKeyProblem).find(Boolean);
  if (merge) return merge;
  const values = list.map((document) => document.toJS({ maxAliasCount: 100 }) as unknown);
  if (values.length === 1 && typeof values[0] === 'string' && !entry.includes('\n')) return undefined;
  return values;
}

/** The references in the config documents of a generator or transformer file. */
function* pluginFileReferences(files: ReadonlyMap<string, Buffer>, file: string): Generator<Reference> {
  const text = files.get(file)!.toString('utf8');
  const breaks = lineBreakProblem(text);
  if (breaks) {
    yield { field: '(document)', value: '', use: 'file', problem: breaks };
    return;
  }
  const documents = parseAllDocuments(text);
  const list = Array.isArray(documents) ? documents : [documents];
  for (const [d, document] of list.entries()) {
    const at = list.length > 1 ? `document ${d + 1}: ` : '';
    if (document.errors.length > 0) {
      yield { field: `${at}(document)`, value: '', use: 'file', problem: 'is not YAML sluice can read' };
      continue;
    }
    const merge = mergeKeyProblem(document);
    if (merge) {
      yield { field: `${at}(document)`, value: '', use: 'file', problem: merge };
      continue;
    }
    for (const reference of pluginReferences(document.toJS({ maxAliasCount: 100 })))
      yield { ...reference, field: `${at}${reference.field}` };
  }
}

/**
 * A builtin plugin config (`apiVersion: builtin`, a kind sluice knows), decoded as kustomize
 * decodes it; every file it names is a reference, every key sluice does not know a problem.
 */
function* pluginReferences(config: unknown): Generator<Reference> {
  const refuse = (field: string, problem: string): Reference => ({ field, value: '', use: 'file', problem });
  if (config === null || config === undefined) return;
  if (!isRecord(config)) {
    yield refuse('(document)', 'is not a generator or transformer config (a YAML object)');
    return;
  }
  const { apiVersion, kind, metadata, ...rest } = config;
  const shape = typeof kind === 'string' ? BUILTIN_PLUGINS[kind] : undefined;
  if (apiVersion !== 'builtin' || shape === undefined) {
    yield refuse(
      'kind',
      `${JSON.stringify(kind)} (apiVersion ${JSON.stringify(apiVersion)}) is not a builtin generator or transformer sluice knows; sluice runs no plugins`,
    );
    return;
  }
  const decoded: Decoded = { problems: [], written: new Map() };
  const exact = EXACT_KEY_PLUGINS.has(kind as string);
  for (const key of Object.keys(rest))
    if (['apiversion', 'kind', 'metadata'].includes(goFold(key)) && !exact)
      decoded.problems.push(`${key} is not read by kustomize as ${goFold(key)}; refused`);
  const fields = typeof shape === 'object' && 'struct' in shape ? shape.struct : {};
  const value = decode(
    shape,
    'metadata' in fields && metadata !== undefined ? { ...rest, metadata } : rest,
    {},
    { canonical: '', written: '' },
    decoded,
    !exact,
  ) as Record<string, unknown>;
  if (!('metadata' in fields) && metadata !== undefined)
    decode(PLUGIN_METADATA, metadata, {}, { canonical: 'metadata', written: 'metadata' }, decoded);
  for (const problem of decoded.problems) yield refuse('', problem);
  const named = (field: string, value: string): Reference => ({
    field: decoded.written.get(field) ?? field,
    value,
    use: 'file',
  });
  if (typeof value.path === 'string') yield named('path', value.path);
  for (const [i, path] of strings(value.paths).entries())
    if (!path.includes('\n')) yield named(`paths[${i}]`, path);
  for (const [i, replacement] of records(value.replacements).entries())
    if (typeof replacement.path === 'string') yield named(`replacements[${i}].path`, replacement.path);
  for (const reference of generatorReferences(value, ''))
    yield { ...reference, field: decoded.written.get(reference.field) ?? reference.field };
}

function* generatorReferences(generator: Record<string, unknown>, at: string): Generator<Reference> {
  const prefix = at === '' ? '' : `${at}.`;
  for (const [i, file] of strings(generator.files).entries()) {
    const field = `${prefix}files[${i}]`;
    // `key=path` names the data key; the file is after the `=`. kustomize refuses more than one `=`.
    if ((file.match(/=/g) ?? []).length > 1)
      yield { field, value: file, use: 'file', problem: `"${file}" has more than one "="` };
    else yield { field, value: file.slice(file.indexOf('=') + 1), use: 'file' };
  }
  for (const [i, file] of strings(generator.envs).entries())
    yield { field: `${prefix}envs[${i}]`, value: file, use: 'file' };
  if (typeof generator.env === 'string') yield { field: `${prefix}env`, value: generator.env, use: 'file' };
}

function referenceProblem(
  files: ReadonlyMap<string, Buffer>,
  dir: string,
  { value, problem }: Reference,
): string | undefined {
  if (problem) return problem;
  if (value.startsWith('//')) return REMOTE;
  if (SCHEME.test(value) || GIT_FORMS.test(value) || REMOTE_QUERY.test(value)) return REMOTE;
  if (value.startsWith('/')) return 'is an absolute path; refer to files in the artifact by relative paths';
  const target = posix.normalize(posix.join(dir || '.', value));
  if (target === '..' || target.startsWith('../')) return 'points outside the artifact';
  // `github.com/org/repo/base` reads as a local path to kustomize only if it exists locally.
  if (HOST_FIRST.test(value) && !existsInArtifact(files, target)) return REMOTE;
  return undefined;
}

function existsInArtifact(files: ReadonlyMap<string, Buffer>, path: string): boolean {
  const normal = path.replace(/\/+$/, '');
  if (files.has(normal)) return true;
  for (const file of files.keys()) if (file.startsWith(`${normal}/`)) return true;
  return false;
}

/**
 * Why a document with a merge key (`<<`, or a key tagged `!!merge`) is refused. kustomize's YAML
 * parser (go-yaml v2) applies every merge key, a later one overriding keys set before it; sluice's
 * applies them only under `%YAML 1.1` or an explicit `!!merge` tag, and never over a key already
 * set: the two would read different kustomizations.
 */
function mergeKeyProblem(document: Document.Parsed): string | undefined {
  let found: string | undefined;
  visit(document, {
    Pair(_, pair) {
      const key = pair.key;
      // A plain `<<` sluice's parser keeps as a key is refused as a field sluice does not know.
      if (
        isScalar(key) &&
        (key.tag === 'tag:yaml.org,2002:merge' ||
          (key.type === 'PLAIN' && key.source === '<<' && key.value !== '<<'))
      ) {
        found =
          'has a YAML merge key (<<), which kustomize applies differently from sluice: refused; write the keys out';
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * Why YAML holding U+0085, U+2028 or U+2029 is refused: kustomize's parser (go-yaml v2, YAML 1.1)
 * reads them as line breaks, sluice's (YAML 1.2) as characters of a scalar, so `- a.yaml`, U+2028,
 * `- https://…` is two resources to kustomize and one odd path to sluice.
 */
function lineBreakProblem(text: string): string | undefined {
  const found = /[\u0085\u2028\u2029]/.exec(text);
  if (!found) return undefined;
  const line = text.slice(0, found.index).split('\n').length;
  const code = found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `line ${line} holds U+${code}, a line break to kustomize's YAML parser but not to sluice's: refused`;
}
