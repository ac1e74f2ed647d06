import { parseAllDocuments } from 'yaml';
import { SluiceError } from '../errors.ts';
import type { Manifest } from './objects.ts';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * Every `.yaml`/`.yml`/`.json` file under `path` in the artifact, in path order, as objects
 * (multi-document YAML split, `List` kinds expanded, empty documents dropped).
 */
export function loadManifests(
  files: ReadonlyMap<string, Buffer>,
  path: string,
  revision: string,
): Manifest[] {
  const prefix = normalisePath(path);
  const selected = [...files.keys()]
    .filter((file) => (prefix === '' || file.startsWith(`${prefix}/`)) && MANIFEST_FILE.test(file))
    .sort();
  if (prefix !== '' && ![...files.keys()].some((file) => file.startsWith(`${prefix}/`))) {
    throw new SluiceError('BuildFailed', `path '${path}' does not exist in artifact ${revision}`);
  }
  return selected.flatMap((file) => parseManifests(files.get(file)!.toString('utf8'), file));
}

/**
 * The objects in one YAML/JSON text, named `file` in errors and origins (multi-document YAML
 * split, `List` kinds expanded, empty documents dropped).
 */
export function parseManifests(text: string, file: string): Manifest[] {
  const manifests: Manifest[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: true });
  for (const [index, doc] of (Array.isArray(docs) ? docs : [docs]).entries()) {
    const origin = index === 0 ? file : `${file}#${index}`;
    const error = doc.errors[0];
    if (error) {
      const where = error.linePos?.[0]
        ? ` line ${error.linePos[0].line}, column ${error.linePos[0].col}`
        : '';
      throw new SluiceError('BuildFailed', `${file}:${where}: invalid YAML: ${error.message.split('\n')[0]}`);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      // e.g. yaml's refusal of an alias bomb ("Excessive alias count …"), which names no file
      throw new SluiceError('BuildFailed', `${origin}: invalid YAML: ${(error as Error).message}`);
    }
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new SluiceError(
        'BuildFailed',
        `${origin}: a manifest must be an object, not ${Array.isArray(value) ? 'a list' : typeof value}`,
      );
    }
    manifests.push(...expandList(value as Manifest['object'], origin));
  }
  return manifests;
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
