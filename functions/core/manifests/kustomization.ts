import { posix } from 'node:path';
import { parse, parseAllDocuments, parseDocument } from 'yaml';
import { SluiceError } from '../errors.ts';
import { isRecord } from '../config/issues.ts';

/** The names kustomize looks for in a directory, in its order. */
const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** Fields whose entries may name another kustomization directory (so may be remote in kustomize). */
const DIRECTORY_LISTS = ['resources', 'bases', 'components', 'generators', 'transformers', 'validators'];
/** Fields whose file entries are generator, transformer or validator configs, which kustomize reads as plugins. */
const PLUGIN_LISTS = ['generators', 'transformers', 'validators'];
/** Fields whose entries are files. */
const FILE_LISTS = ['crds', 'configurations', 'patchesStrategicMerge'];
/** Lists of objects with a `path` file. */
const PATH_OBJECT_LISTS = ['patches', 'patchesJson6902', 'replacements'];
const GENERATOR_LISTS = ['configMapGenerator', 'secretGenerator'];
/** Fields that make kustomize run helm, which may fetch charts: refused. */
const HELM_FIELDS = ['helmCharts', 'helmGlobals', 'helmChartInflationGenerator'];

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

/** A reference from one kustomization file: where it is (`resources[2]`) and what it says. */
interface Reference {
  readonly field: string;
  readonly value: string;
  readonly mayBeDirectory: boolean;
  /** A file here is a plugin config: its own references are checked too. */
  readonly pluginFile?: boolean;
  /** Refused whatever the value says. */
  readonly problem?: string;
}

/**
 * Reads every kustomization reachable from `dir` and refuses, before kustomize runs, a build that
 * would reach outside the artifact: remote bases, resources, components or files (URLs,
 * `github.com/...`, `git::`, `?ref=`), absolute paths, and `..` paths that leave the artifact
 * root. The error names each file and entry.
 */
export function inspectKustomizations(files: ReadonlyMap<string, Buffer>, dir: string): KustomizationInfo {
  const problems: string[] = [];
  const seen = new Set<string>();
  const queue = [dir];
  let originAnnotations = false;
  let rootSortOptions: unknown;
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (seen.has(current)) continue;
    seen.add(current);
    const file = kustomizationIn(files, current);
    if (!file) continue;
    const kustomization = readKustomization(files, file);
    if (current === dir) rootSortOptions = kustomization.sortOptions;
    if (declaresOriginAnnotations(kustomization)) originAnnotations = true;
    for (const reference of referencesOf(kustomization)) {
      const problem = referenceProblem(files, current, reference);
      if (problem) {
        const quoted = reference.problem ? '' : ` "${reference.value}"`;
        problems.push(`${file}: ${reference.field}${quoted} ${problem}`);
        continue;
      }
      const target = posix.normalize(posix.join(current || '.', reference.value)).replace(/\/+$/, '');
      if (reference.mayBeDirectory) queue.push(target === '.' ? '' : target);
      if (reference.pluginFile && files.has(target))
        for (const config of pluginConfigs(files, target))
          for (const inner of [...referencesOf(config), ...pluginReferences(config)]) {
            const innerProblem = referenceProblem(files, current, inner);
            if (innerProblem)
              problems.push(
                `${target} (${reference.field}): ${inner.field}${inner.problem ? '' : ` "${inner.value}"`} ${innerProblem}`,
              );
          }
    }
  }
  if (problems.length > 0) {
    problems.splice(0, problems.length, ...new Set(problems)); // a path also found as a remote string
    const more = problems.length > MAX_LISTED ? ` (and ${problems.length - MAX_LISTED} more)` : '';
    const advice = problems.some((problem) => problem.endsWith(REMOTE))
      ? '. The artifact must be self-contained: vendor remote bases into it and refer to them by relative paths'
      : '';
    throw new SluiceError('BuildFailed', `${problems.slice(0, MAX_LISTED).join('; ')}${more}${advice}`);
  }
  return { originAnnotations, rootSortOptions, dirs: [...seen] };
}

/** What the build needs to know about the kustomizations it checked. */
export interface KustomizationInfo {
  /** Some kustomization asks for `buildMetadata: [originAnnotations]` itself: keep them in the output. */
  readonly originAnnotations: boolean;
  /** The root kustomization's `sortOptions`, which only apply at the top of a build. */
  readonly rootSortOptions: unknown;
  /** Every directory the build reaches (`''` for the artifact root). */
  readonly dirs: readonly string[];
}

function readKustomization(files: ReadonlyMap<string, Buffer>, file: string): Record<string, unknown> {
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
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  if (value === null || value === undefined) return {};
  if (!isRecord(value))
    throw new SluiceError('BuildFailed', `${file}: a kustomization must be a YAML object`);
  return value;
}

function declaresOriginAnnotations(kustomization: Record<string, unknown>): boolean {
  const metadata = kustomization.buildMetadata;
  return Array.isArray(metadata) && metadata.includes('originAnnotations');
}

/** The YAML documents of a plugin config file that are objects. */
function pluginConfigs(files: ReadonlyMap<string, Buffer>, file: string): Record<string, unknown>[] {
  const documents = parseAllDocuments(files.get(file)!.toString('utf8'));
  const configs: Record<string, unknown>[] = [];
  for (const document of documents) {
    if (document.errors.length > 0) continue; // kustomize reports it; nothing in it can be read
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    if (isRecord(value)) configs.push(value);
  }
  return configs;
}

/**
 * An entry that may be inline YAML (an object, or text holding one). A one-line string is also a
 * path to kustomize, which tries it as a path first, so it is checked as one too (referencesOf).
 */
function inlineConfig(entry: unknown): Record<string, unknown> | undefined {
  if (isRecord(entry)) return entry;
  if (typeof entry !== 'string' || !/[\n{:]/.test(entry)) return undefined;
  let value: unknown;
  try {
    value = parse(entry, { maxAliasCount: 100 });
  } catch {
    return undefined;
  }
  return isRecord(value) ? value : undefined;
}

/**
 * The files a generator or transformer config names (`files`, `envs`, `env`, `path`, `paths`),
 * and every other string in it that reads as a remote address, wherever it is: builtin plugins
 * have many fields kustomize may read from.
 */
function* pluginReferences(config: Record<string, unknown>): Generator<Reference> {
  yield* generatorReferences(config, '');
  if (typeof config.path === 'string') yield { field: 'path', value: config.path, mayBeDirectory: false };
  if (Array.isArray(config.paths))
    for (const [i, path] of config.paths.entries())
      if (typeof path === 'string') yield { field: `paths[${i}]`, value: path, mayBeDirectory: false };
  yield* remoteStrings(config, '');
}

/** Every string under `value` that reads as a remote address, as a refused reference. */
function* remoteStrings(value: unknown, at: string): Generator<Reference> {
  if (typeof value === 'string') {
    if (looksRemote(value))
      yield { field: at || '(value)', value, mayBeDirectory: false, problem: `"${value}" ${REMOTE}` };
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* remoteStrings(item, `${at}[${i}]`);
  } else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value))
      // Labels and annotations are values written into objects, never read from.
      if (!TEXT_VALUES.has(key)) yield* remoteStrings(item, at ? `${at}.${key}` : key);
  }
}

const TEXT_VALUES = new Set(['metadata', 'labels', 'annotations', 'commonLabels', 'commonAnnotations']);

const looksRemote = (value: string): boolean =>
  value.startsWith('//') || SCHEME.test(value) || /^git::|^git@/.test(value) || REMOTE_QUERY.test(value);

function* generatorReferences(generator: Record<string, unknown>, at: string): Generator<Reference> {
  const prefix = at === '' ? '' : `${at}.`;
  const entries = (key: string) => (Array.isArray(generator[key]) ? (generator[key] as unknown[]) : []);
  for (const [i, file] of entries('files').entries()) {
    // `key=path` names the data key; the file is after the `=`.
    if (typeof file === 'string') {
      yield {
        field: `${prefix}files[${i}]`,
        value: file.slice(file.indexOf('=') + 1),
        mayBeDirectory: false,
      };
    }
  }
  for (const [i, file] of entries('envs').entries()) {
    if (typeof file === 'string') yield { field: `${prefix}envs[${i}]`, value: file, mayBeDirectory: false };
  }
  if (typeof generator.env === 'string')
    yield { field: `${prefix}env`, value: generator.env, mayBeDirectory: false };
}

function* referencesOf(kustomization: Record<string, unknown>): Generator<Reference> {
  for (const field of HELM_FIELDS) {
    if (kustomization[field] !== undefined)
      yield {
        field,
        value: '',
        mayBeDirectory: false,
        problem: 'is not supported: sluice does not run helm',
      };
  }
  const list = (field: string): unknown[] => {
    const value = kustomization[field];
    return Array.isArray(value) ? value : [];
  };
  for (const field of [...DIRECTORY_LISTS, ...FILE_LISTS]) {
    for (const [index, entry] of list(field).entries()) {
      const at = `${field}[${index}]`;
      const inline = inlineConfig(entry);
      if (inline !== undefined) {
        // An inline patch or plugin config: its own file and path fields are read by kustomize too.
        for (const reference of referencesOf(inline))
          yield { ...reference, field: `${at}.${reference.field}` };
        for (const reference of pluginReferences(inline))
          yield { ...reference, field: `${at}.${reference.field}` };
      }
      // kustomize tries a one-line entry as a path (or URL) before it reads it as inline YAML.
      if (typeof entry === 'string' && !entry.includes('\n')) {
        yield {
          field: at,
          value: entry,
          mayBeDirectory: DIRECTORY_LISTS.includes(field),
          pluginFile: PLUGIN_LISTS.includes(field),
        };
      }
    }
  }
  for (const field of PATH_OBJECT_LISTS) {
    for (const [index, entry] of list(field).entries()) {
      if (isRecord(entry) && typeof entry.path === 'string') {
        yield { field: `${field}[${index}].path`, value: entry.path, mayBeDirectory: false };
      }
    }
  }
  for (const field of GENERATOR_LISTS) {
    for (const [index, generator] of list(field).entries()) {
      if (isRecord(generator)) yield* generatorReferences(generator, `${field}[${index}]`);
    }
  }
  const openapi = kustomization.openapi;
  if (isRecord(openapi) && typeof openapi.path === 'string') {
    yield { field: 'openapi.path', value: openapi.path, mayBeDirectory: false };
  }
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
