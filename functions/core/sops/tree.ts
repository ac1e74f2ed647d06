import { createHash, type Hash } from 'node:crypto';
import type { GoRegexp } from '../go-regexp.ts';
import type { EncryptionRule } from './metadata.ts';
import { decryptValue, macBytes, ValueError } from './values.ts';

/** sha256("sops"): the MAC of a `mac_only_encrypted` file starts from it, so the two kinds never match. */
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from(
  '8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69',
  'hex',
);

/** A document as parsed: plain objects, or Maps where the order of keys must be kept (for the MAC). */
export type Node = unknown;

/** Which value failed, by its path (`stringData.password`), never by its content. */
export class TreeError extends Error {
  override readonly name = 'TreeError';
}

/** Is the value at `path` encrypted, by the file's rule (sops `shouldBeEncrypted`)? */
export function isEncryptedPath(path: readonly string[], rule: EncryptionRule): boolean {
  switch (rule.kind) {
    case 'unencrypted_suffix':
      return !path.some((key) => key.endsWith(rule.value));
    case 'encrypted_suffix':
      return path.some((key) => key.endsWith(rule.value));
    case 'unencrypted_regex':
      return !path.some((key) => keyMatches(key, rule.kind, rule.regex));
    case 'encrypted_regex':
      return path.some((key) => keyMatches(key, rule.kind, rule.regex));
  }
}

function keyMatches(key: string, field: string, regex: GoRegexp): boolean {
  if (!regex.fits(key))
    throw new TreeError(
      `the key ${JSON.stringify(key.slice(0, 40))}… (${key.length} characters) is too long to match against the file's ${field} within sluice's bound`,
    );
  return regex.test(key);
}

interface Walk {
  readonly dataKey: Buffer;
  readonly rule: EncryptionRule;
  readonly hash?: Hash;
  readonly macOnlyEncrypted: boolean;
  readonly onDecrypted?: (path: readonly string[], value: unknown) => void;
}

function entriesOf(node: object): [string, unknown][] {
  if (node instanceof Map) return [...node.entries()].map(([key, value]) => [String(key), value]);
  return Object.entries(node);
}

function walk(node: Node, path: string[], options: Walk): unknown {
  if (node === null || node === undefined) return node;
  if (Array.isArray(node)) return node.map((item) => walk(item, path, options));
  if (typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of entriesOf(node)) {
      if (path.length === 0 && key === 'sops') continue;
      out[key] = walk(value, [...path, key], options);
    }
    return out;
  }
  const encrypted = isEncryptedPath(path, options.rule);
  let value: unknown = node;
  if (encrypted) {
    if (typeof node !== 'string')
      throw new TreeError(`${path.join('.')}: expected an encrypted value, found a ${typeof node}`);
    try {
      value = decryptValue(node, options.dataKey, `${path.join(':')}:`);
    } catch (error) {
      if (error instanceof ValueError) throw new TreeError(`${path.join('.')}: ${error.message}`);
      throw error;
    }
    options.onDecrypted?.(path, value);
  }
  if (!options.macOnlyEncrypted || encrypted) options.hash?.update(macBytes(value), 'utf8');
  return value;
}

/**
 * A document with every encrypted value decrypted and its `sops` block removed; `onDecrypted` is
 * told each value that was encrypted, with its path.
 */
export function decryptDocument(
  document: Node,
  dataKey: Buffer,
  rule: EncryptionRule,
  onDecrypted?: (path: readonly string[], value: unknown) => void,
): Record<string, unknown> {
  return walk(document, [], { dataKey, rule, macOnlyEncrypted: false, onDecrypted }) as Record<
    string,
    unknown
  >;
}

/**
 * The MAC sops computes over a file's documents, in their order: SHA-512 of every value (decrypted
 * where encrypted; only the encrypted ones with `mac_only_encrypted`), as upper-case hex.
 */
export function computeMac(
  documents: readonly Node[],
  dataKey: Buffer,
  rule: EncryptionRule,
  macOnlyEncrypted: boolean,
): string {
  const hash = createHash('sha512');
  if (macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_INIT);
  for (const document of documents) walk(document, [], { dataKey, rule, hash, macOnlyEncrypted });
  return hash.digest('hex').toUpperCase();
}
