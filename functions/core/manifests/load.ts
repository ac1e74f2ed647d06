import { Composer, Lexer, LineCounter, Parser, type Document, type YAMLError } from 'yaml';
import { SluiceError } from '../errors.ts';
import { DEFAULT_BUILD_LIMITS, type BuildLimits } from '../limits.ts';
import { formatBytes } from '../limits.ts';
import { pacer, type Pacer } from '../pacer.ts';
import { countDocuments, largestParts, ObjectCounter } from './count.ts';
import type { Manifest } from './objects.ts';
import { checkUniqueKeys } from './unique-keys.ts';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;
/** How many lexical tokens, or characters of them, are parsed between looks at the clock. */
const TOKENS_PER_LOOK = 512;
/** A block scalar is one token: a 900 KiB ConfigMap value is worth a look by itself. */
const CHARS_PER_LOOK = 64 * 1024;

/** How a build parses: its limits, and how often it lets the event loop turn. */
export interface ParseOptions {
  /** Counts objects across every file of the build; stops the build past its limit. */
  readonly counter: ObjectCounter;
  readonly pacer: Pacer;
}

/** Options for a build's parse: a counter up to `maxObjects` (the limit) and the default pace. */
export function parseOptions(maxObjects: number = DEFAULT_BUILD_LIMITS.maxObjects): ParseOptions {
  return { counter: new ObjectCounter(maxObjects), pacer: pacer() };
}

/**
 * Every `.yaml`/`.yml`/`.json` file under `path` in the artifact, in path order, as objects
 * (multi-document YAML split, `List` kinds expanded, empty documents dropped). Before parsing
 * anything, the files' size and YAML document count are checked against `limits`.
 */
export async function loadManifests(
  files: ReadonlyMap<string, Buffer>,
  path: string,
  revision: string,
  limits: BuildLimits = DEFAULT_BUILD_LIMITS,
): Promise<Manifest[]> {
  const prefix = normalisePath(path);
  const selected = [...files.keys()]
    .filter((file) => (prefix === '' || file.startsWith(`${prefix}/`)) && MANIFEST_FILE.test(file))
    .sort();
  if (prefix !== '' && ![...files.keys()].some((file) => file.startsWith(`${prefix}/`))) {
    throw new SluiceError('BuildFailed', `path '${path}' does not exist in artifact ${revision}`);
  }
  const where = `artifact ${revision}: path '${path}'`;
  const sizes = selected.map((file) => [file, files.get(file)!.length] as const);
  const bytes = sizes.reduce((sum, [, size]) => sum + size, 0);
  if (bytes > limits.maxManifestBytes) {
    throw new SluiceError(
      'BuildFailed',
      `${where} holds ${formatBytes(bytes)} of manifests (${largestParts(sizes, formatBytes)}), more than the limit maxManifestBytes (${formatBytes(limits.maxManifestBytes)}); nothing was parsed`,
    );
  }

  const options = parseOptions(limits.maxObjects);
  const texts: (readonly [string, string])[] = [];
  const counts: (readonly [string, number])[] = [];
  for (const file of selected) {
    const text = files.get(file)!.toString('utf8');
    texts.push([file, text]);
    counts.push([file, countDocuments(text)]);
    await options.pacer.pause();
  }
  checkDocumentCount(
    counts.reduce((sum, [, n]) => sum + n, 0),
    limits.maxObjects,
    where,
    () => ` (${largestParts(counts, String)})`,
  );

  const manifests: Manifest[] = [];
  for (const [file, text] of texts) {
    for (const manifest of await parseManifests(text, file, options)) manifests.push(manifest);
  }
  return manifests;
}

/** Refuses a build whose YAML documents, counted before parsing, are more than `maxObjects` (the limit). */
export function checkDocumentCount(
  documents: number,
  maxObjects: number,
  where: string,
  detail: () => string = () => '',
): void {
  if (documents <= maxObjects) return;
  throw new SluiceError(
    'BuildFailed',
    `${where} holds ${documents} YAML documents${detail()}, more than the limit maxObjects (${maxObjects} objects); nothing was parsed`,
  );
}

/**
 * The objects in one YAML/JSON text, named `file` in errors and origins (multi-document YAML
 * split, `List` kinds expanded, empty documents dropped). Parsed one document at a time, each
 * turned into plain objects and its syntax tree dropped, with a turn of the event loop every few
 * milliseconds; stops as soon as the build has more objects than its limit.
 */
export async function parseManifests(
  text: string,
  file: string,
  options: ParseOptions = parseOptions(),
): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  const lines = new LineCounter();
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer({ prettyErrors: true, uniqueKeys: false });
  let index = 0;
  const take = (docs: Iterable<Document.Parsed>) => {
    for (const doc of docs) {
      for (const manifest of toManifests(doc, {
        index: index++,
        text,
        file,
        lines,
        counter: options.counter,
      }))
        manifests.push(manifest);
    }
  };
  lines.addNewLine(0);
  let tokens = 0;
  let chars = 0;
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) take(composer.next(token));
    chars += lexeme.length;
    if (++tokens % TOKENS_PER_LOOK === 0 || chars >= CHARS_PER_LOOK) {
      chars = 0;
      await options.pacer.pause();
    }
  }
  for (const token of parser.end()) take(composer.next(token));
  take(composer.end());
  await options.pacer.pause();
  return manifests;
}

/** One parsed document as objects: checked, turned into plain values, a `List` expanded. */
/** Where a document stands: its index in its file, the file's text and name, and the run's counts. */
interface DocumentPlace {
  readonly index: number;
  readonly text: string;
  readonly file: string;
  readonly lines: LineCounter;
  readonly counter: ObjectCounter;
}

function toManifests(doc: Document.Parsed, { index, text, file, lines, counter }: DocumentPlace): Manifest[] {
  const origin = index === 0 ? file : `${file}#${index}`;
  checkUniqueKeys(doc);
  const error = doc.errors[0];
  if (error) {
    const { where, message } = describeYamlError(error, text, lines);
    throw new SluiceError('BuildFailed', `${file}:${where}: invalid YAML: ${message}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // e.g. yaml's refusal of an alias bomb ("Excessive alias count …"), which names no file
    throw new SluiceError('BuildFailed', `${origin}: invalid YAML: ${(error as Error).message}`);
  }
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new SluiceError(
      'BuildFailed',
      `${origin}: a manifest must be an object, not ${Array.isArray(value) ? 'a list' : typeof value}`,
    );
  }
  const manifests = expandList(value as Manifest['object'], origin);
  for (const manifest of manifests) counter.add(manifest.origin);
  return manifests;
}

/**
 * ` line 3, column 1` and the first line of yaml's message, as `parseAllDocuments` with
 * `prettyErrors` words them (yaml does not export its prettifier).
 */
function describeYamlError(
  error: YAMLError,
  text: string,
  lines: LineCounter,
): { where: string; message: string } {
  const firstLine = error.message.split('\n')[0]!;
  if (error.pos[0] === -1) return { where: '', message: firstLine };
  const { line, col } = lines.linePos(error.pos[0]);
  const shown = text.slice(lines.lineStarts[line - 1], lines.lineStarts[line]).replace(/[\n\r]+$/, '');
  // yaml adds the offending line (or, for a blank one, the line before too) after a colon.
  const context = /[^ ]/.test(shown) || shown.length > 80 || line > 1;
  return {
    where: ` line ${line}, column ${col}`,
    message: `${firstLine} at line ${line}, column ${col}${context ? ':' : ''}`,
  };
}

function expandList(object: Manifest['object'], origin: string): Manifest[] {
  const isList =
    typeof object.kind === 'string' && object.kind.endsWith('List') && Array.isArray(object.items);
  if (!isList) return [{ object, origin }];
  return (object.items as Manifest['object'][]).map((item, i) => ({
    object: item,
    origin: `${origin} items[${i}]`,
  }));
}

function normalisePath(path: string): string {
  return path
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}
