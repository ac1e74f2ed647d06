import { createHmac } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { isRecord } from '../config/issues.ts';
import { SluiceError } from '../errors.ts';
import { describeDocument, isSopsEncrypted, type Decryptor } from '../manifests/encrypted.ts';
import { settledNamespace, type Manifest } from '../manifests/objects.ts';
import { DataKeyError, openDataKey, type SopsKeys } from './data-key.ts';
import { macAad, MetadataError, readMetadata, sameRule, type SopsMetadata } from './metadata.ts';
import { computeMac, decryptDocument, TreeError, type Node } from './tree.ts';
import { decryptValue, ValueError } from './values.ts';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** An encrypted file of the artifact as sops wrote it: its documents in their order, for the MAC. */
interface EncryptedFile {
  readonly path: string;
  readonly documents: readonly Node[];
  /** The first document's `sops` block (sops reads the metadata from there). */
  readonly sops: unknown;
  /** Why the file is not read as sops and kustomize read it: it is refused. */
  readonly problem?: string;
}

/** go-yaml (sops, kustomize) breaks lines at these; sluice's parser (YAML 1.2) does not. */
const YAML_11_BREAK = /[\u0085\u2028\u2029]/;

/**
 * The artifact's sops-encrypted files by their (encrypted) MAC. A build may reorder keys (kustomize
 * does) and the MAC is computed in the file's order, so it is checked on the file as written;
 * each built object is matched to its file by the MAC its `sops` block carries.
 */
function encryptedFiles(files: ReadonlyMap<string, Buffer>): Map<string, EncryptedFile[]> {
  const byMac = new Map<string, EncryptedFile[]>();
  for (const [path, content] of files) {
    if (!MANIFEST_FILE.test(path) || !content.includes('sops') || !content.includes('mac')) continue;
    let documents: Node[];
    try {
      documents = parseAllDocuments(content.toString('utf8'), { uniqueKeys: false })
        .filter((doc) => doc.errors.length === 0)
        .map((doc) => doc.toJS({ mapAsMap: true, maxAliasCount: 100 }) as Node);
    } catch {
      continue; // the build reports what is wrong with the file
    }
    const first = documents[0];
    const sops = first instanceof Map ? toPlain(first.get('sops')) : undefined;
    const mac = isRecord(sops) ? sops.mac : undefined;
    if (typeof mac !== 'string') continue;
    const found = YAML_11_BREAK.exec(content.toString('utf8'));
    const problem = found
      ? `it holds U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, a line break to sops and kustomize but not to sluice's YAML parser, so its MAC would be checked over other content than they read`
      : undefined;
    byMac.set(mac, [...(byMac.get(mac) ?? []), { path, documents, sops, ...(problem && { problem }) }]);
  }
  return byMac;
}

const failure = (where: string, problem: string) =>
  new SluiceError('BuildFailed', `${where}: SOPS decryption failed: ${problem}; nothing was applied`);

/** Why the MAC of `file` does not hold, or undefined when it matches the one computed over its values. */
function macProblem(file: EncryptedFile, metadata: SopsMetadata, dataKey: Buffer): string | undefined {
  let stored: unknown;
  try {
    stored = decryptValue(metadata.mac, dataKey, macAad(metadata.lastModified));
  } catch (error) {
    if (error instanceof ValueError) return `its MAC (sops.mac) ${error.message}`;
    throw error;
  }
  const computed = computeMac(file.documents, dataKey, metadata.rule, metadata.macOnlyEncrypted);
  return stored === computed ? undefined : 'MAC mismatch: the file was changed after sops encrypted it';
}

const IDENTITY_PATHS = new Set(['apiVersion', 'kind', 'metadata.name', 'metadata.namespace']);

/** apiVersion, kind, namespace (as the delivery settles it) and name of a decrypted document. */
function identityOf(document: Record<string, unknown>, targetNamespace: string | undefined): string {
  const metadata = isRecord(document.metadata) ? document.metadata : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
  return JSON.stringify([
    document.apiVersion,
    document.kind,
    settledNamespace(namespace, targetNamespace),
    metadata.name,
  ]);
}

/** The Secrets (v1) the documents of `files` declare, by identity: the only objects decrypted. */
function declaredSecrets(
  files: readonly EncryptedFile[],
  dataKey: Buffer,
  targetNamespace: string | undefined,
): Set<string> {
  const declared = new Set<string>();
  for (const file of files) {
    const rule = readMetadata(file.sops).rule;
    for (const document of file.documents) {
      const plain = decryptDocument(document, dataKey, rule);
      if (plain.apiVersion === 'v1' && plain.kind === 'Secret')
        declared.add(identityOf(plain, targetNamespace));
    }
  }
  return declared;
}

/**
 * A Decryptor for sops files (YAML and JSON; AWS KMS and age keys): every encrypted object of the
 * build is matched to its file in the artifact, the file's data key is opened with `keys` and its
 * MAC checked, then the object's values are decrypted, in memory. Only a v1 Secret that its file
 * declares (same namespace, as the delivery settles it, and name) is decrypted: a build that
 * changed its kind, name or namespace fails, since the values would land where the file does not
 * put them. Every decrypted value is told to `taint`. Errors name the file and object and never
 * hold a decrypted value.
 */
export function sopsDecryptor(keys: SopsKeys): Decryptor {
  return {
    async decrypt({ manifests, files, decryption, targetNamespace, taint }) {
      const byMac = encryptedFiles(files);
      const dataKeys = new Map<string, Promise<Buffer>>();
      const checked = new Set<EncryptedFile>();
      const out: Manifest[] = [];
      for (const manifest of manifests) {
        if (!isSopsEncrypted(manifest)) {
          out.push(manifest);
          continue;
        }
        const where = `${manifest.origin}: ${describeDocument(manifest)}`;
        try {
          const metadata = readMetadata(manifest.object.sops);
          const sources = byMac.get(metadata.mac);
          if (!sources)
            throw failure(
              where,
              'its sops block matches no encrypted file of the artifact (was it changed by the build?)',
            );
          let dataKey = dataKeys.get(metadata.mac);
          if (!dataKey) dataKeys.set(metadata.mac, (dataKey = openDataKey(metadata, decryption, keys)));
          const key = await dataKey;
          for (const source of sources) {
            if (checked.has(source)) continue;
            if (source.problem) throw failure(where, `${source.path}: ${source.problem}`);
            const problem = macProblem(source, readMetadata(source.sops), key);
            const inFile = manifest.origin.split('#')[0] === source.path ? '' : ` (in ${source.path})`;
            if (problem) throw failure(where, `${problem}${inFile}`);
            checked.add(source);
          }
          // The rule the MAC was checked with, never the build's copy of the sops block.
          const { rule } = readMetadata(sources[0]!.sops);
          if (
            !sameRule(rule, metadata.rule) ||
            sources.some((s) => !sameRule(readMetadata(s.sops).rule, rule))
          )
            throw failure(
              where,
              `its sops block says which values are encrypted (${metadata.rule.kind}) other than its file does (was it changed by the build?)`,
            );
          const object = decryptDocument(manifest.object, key, rule, (path, value) => {
            if (!IDENTITY_PATHS.has(path.join('.'))) taint?.add(value);
          });
          if (!declaredSecrets(sources, key, targetNamespace).has(identityOf(object, targetNamespace)))
            throw failure(
              where,
              `the build made it something other than a Secret (v1) its file declares${sources.length === 1 ? ` (${sources[0]!.path})` : ''}: ` +
                'only a Secret of the apiVersion, kind, namespace and name written in its encrypted file is decrypted ' +
                '(a kustomize patch, namespace, namePrefix or nameSuffix must not change them; set the namespace in the file, or targetNamespace)',
            );
          const problem = namespaceProblem(object, targetNamespace, decryption.namespaces);
          if (problem) throw failure(where, problem);
          out.push({ ...manifest, object: object as Manifest['object'], hashKey: inventoryHashKey(key) });
        } catch (error) {
          if (error instanceof SluiceError) throw error;
          if (error instanceof MetadataError || error instanceof DataKeyError || error instanceof TreeError)
            throw failure(where, error.message);
          throw error;
        }
      }
      return out;
    },
  };
}

/**
 * Why a decrypted Secret may not land where it settles, or undefined. sops's MAC covers values,
 * not keys: renaming `namespace` and a label of another value (keeping their order) moves a
 * Secret undetected. So the namespace is never taken from the file alone: it must be one the
 * delivery names (`decryption.namespaces`, else its `targetNamespace`, else `default`).
 */
function namespaceProblem(
  object: Record<string, unknown>,
  targetNamespace: string | undefined,
  allowed: readonly string[] | undefined,
): string | undefined {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const settled = settledNamespace(
    typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
    targetNamespace,
  );
  const namespaces = allowed ?? [targetNamespace ?? 'default'];
  if (namespaces.includes(settled)) return undefined;
  const from = allowed
    ? 'its decryption.namespaces'
    : targetNamespace
      ? 'its targetNamespace'
      : 'default, as it sets neither targetNamespace nor decryption.namespaces';
  return (
    `it would land in namespace "${settled}", but the delivery decrypts Secrets only into ${namespaces.map((n) => `"${n}"`).join(', ')} (${from}). ` +
    "sops's MAC does not cover keys, so a file's namespace is not trusted on its own: list the namespace in decryption.namespaces"
  );
}

/** The key a decrypted object's inventory hash is keyed with: derived from its file's data key. */
const inventoryHashKey = (dataKey: Buffer): Buffer =>
  createHmac('sha256', dataKey).update('sluice inventory hash').digest();

function toPlain(node: unknown): unknown {
  if (node instanceof Map) return Object.fromEntries([...node].map(([k, v]) => [String(k), toPlain(v)]));
  if (Array.isArray(node)) return node.map(toPlain);
  return node;
}
