// The invariant soak encrypts Secrets at run time (test/support/sops-encrypt.ts); what it writes
// must be what sluice decrypts, or the soak's no-leak would check files that never decrypt.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { openDataKey } from '../../../functions/core/sops/data-key.ts';
import { macAad, readMetadata } from '../../../functions/core/sops/metadata.ts';
import { computeMac, decryptDocument } from '../../../functions/core/sops/tree.ts';
import { decryptValue } from '../../../functions/core/sops/values.ts';
import { sopsEncrypt } from '../../support/sops-encrypt.ts';

const identity = readFileSync(join(import.meta.dirname, '../../fixtures/sops/age.key'), 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('AGE-SECRET-KEY-'));
const keys = {
  kmsDecrypt: () => Promise.reject(new Error('no KMS here')),
  ageIdentities: async () => identity,
};
const decryption = { provider: 'sops' as const, kmsKeyArns: [], ageKeySecretArn: 'arn:age' };

const plain = (node: unknown): unknown =>
  node instanceof Map
    ? Object.fromEntries([...node].map(([k, v]) => [String(k), plain(v)]))
    : Array.isArray(node)
      ? node.map(plain)
      : node;

async function open(text: string) {
  const documents = parseAllDocuments(text).map((d) => d.toJS({ mapAsMap: true }) as Map<string, unknown>);
  const metadata = readMetadata(plain(documents[0]!.get('sops')));
  const key = await openDataKey(metadata, decryption as never, keys);
  return { documents, metadata, key };
}

describe('sops-encrypt (the soak writes files sluice decrypts)', () => {
  it('values in data and stringData decrypt, the MAC holds, the rest stays plain', async () => {
    const text = await sopsEncrypt([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'n' },
        data: { token: 'c2VjcmV0' },
        stringData: { value: 'secret' },
      },
    ]);
    expect(text).not.toContain('secret\n');
    const { documents, metadata, key } = await open(text);
    expect(decryptValue(metadata.mac, key, macAad(metadata.lastModified))).toBe(
      computeMac(documents, key, metadata.rule, false),
    );
    expect(decryptDocument(documents[0], key, metadata.rule)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'n' },
      data: { token: 'c2VjcmV0' },
      stringData: { value: 'secret' },
    });
  });

  it('an encrypted_regex edited after encryption is written as given (and breaks the MAC)', async () => {
    const text = await sopsEncrypt(
      [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { t: 'eA==' } }],
      {
        editedRegex: '^(data)$x',
      },
    );
    const { documents, metadata, key } = await open(text);
    expect(text).toContain('encrypted_regex: ^(data)$x');
    expect(decryptValue(metadata.mac, key, macAad(metadata.lastModified))).not.toBe(
      computeMac(documents, key, metadata.rule, false),
    );
  });
});
