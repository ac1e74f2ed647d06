// SOPS files made at run time (age, for the test-only identity of test/fixtures/sops), so the
// invariant soak can encrypt Secrets that name their own namespace: the committed fixtures name
// none, so a kustomization's `namespace:` makes them Secrets their file does not declare, and
// the identity rule (rightly) refuses to decrypt them. The format is sops 3's as sluice reads it
// (functions/core/sops): AES-256-GCM per value with its path as AAD, a SHA-512 MAC over every
// value in file order, encrypted with `lastmodified` as AAD. Whether sluice decrypts what this
// writes is what the soak counts (a decrypt seen), so a drift from the format shows as zero.
// No vitest imports: the soak runs it under plain tsx.
import { armor, Encrypter } from 'age-encryption';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { AGE_RECIPIENT } from '../fixtures/sops/plaintext.ts';

type Tree = Record<string, unknown>;

export interface EncryptOptions {
  /** Which keys' values are encrypted (sops --encrypted-regex); default `^(data|stringData)$`. */
  readonly encryptedRegex?: string;
  /** Written into the metadata after encryption instead of the regex used (an edited sops block). */
  readonly editedRegex?: string;
}

function encryptValue(plain: string, dataKey: Buffer, aad: string): string {
  const iv = randomBytes(32);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `ENC[AES256_GCM,data:${data.toString('base64')},iv:${iv.toString('base64')},tag:${cipher.getAuthTag().toString('base64')},type:str]`;
}

/** Walks `node` in key order: encrypts the string values under a key `regex` matches, hashes every value. */
function walk(
  node: unknown,
  path: string[],
  regex: RegExp,
  dataKey: Buffer,
  hash: ReturnType<typeof createHash>,
): unknown {
  if (Array.isArray(node)) return node.map((item) => walk(item, path, regex, dataKey, hash));
  if (node !== null && typeof node === 'object')
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, walk(value, [...path, key], regex, dataKey, hash)]),
    );
  const text = String(node);
  hash.update(text, 'utf8');
  return path.some((key) => regex.test(key)) ? encryptValue(text, dataKey, `${path.join(':')}:`) : node;
}

/** A sops-encrypted YAML file of `documents` (Secrets, say), encrypted for the test-only age identity. */
export async function sopsEncrypt(documents: readonly Tree[], options: EncryptOptions = {}): Promise<string> {
  const regexText = options.encryptedRegex ?? '^(data|stringData)$';
  const regex = new RegExp(regexText);
  const dataKey = randomBytes(32);
  const hash = createHash('sha512');
  const encrypted = documents.map((document) => walk(document, [], regex, dataKey, hash) as Tree);
  const lastmodified = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const encrypter = new Encrypter();
  encrypter.addRecipient(AGE_RECIPIENT);
  const enc = armor.encode(await encrypter.encrypt(dataKey));
  const sops = {
    age: [{ recipient: AGE_RECIPIENT, enc }],
    lastmodified,
    mac: encryptValue(hash.digest('hex').toUpperCase(), dataKey, lastmodified),
    encrypted_regex: options.editedRegex ?? regexText,
    version: '3.13.3',
  };
  return encrypted.map((document) => stringify({ ...document, sops })).join('---\n');
}
