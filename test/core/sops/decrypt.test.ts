// SOPS decryption in the build, on files the real sops CLI encrypted (test/fixtures/sops): data
// keys opened by local-kms (through AWS_ENDPOINT_URL_KMS) and by age identities from Secrets
// Manager (the local endpoint), MACs checked, and every way a file can be wrong refused, naming it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_KMS_KEYS } from '../../../dev/local-kms.ts';
import { SluiceError } from '../../../functions/core/errors.ts';
import { buildManifests } from '../../../functions/core/manifests/build.ts';
import type { Manifest } from '../../../functions/core/manifests/objects.ts';
import { NESTED_QUANTIFIER_KEY, PLAINTEXT_MARKER } from '../../fixtures/sops/plaintext.ts';
import { engineDeps } from '../../support/deliveries.ts';
import { ageKeySecret, sopsDecryption, sopsFixture } from '../../support/sops.ts';
import { testbed } from '../../support/testbed.ts';
import { artifact, byName, configMap, deliveryWith, kubectl } from '../manifests/fixtures.ts';

testbed();
const { decryptor } = engineDeps();
let ageSecret: string;
beforeAll(async () => {
  ageSecret = await ageKeySecret();
});

const build = (files: Record<string, string>, overrides: Record<string, unknown> = {}) =>
  buildManifests(
    artifact(files),
    deliveryWith({ decryption: sopsDecryption(ageSecret), ...overrides }),
    'main@sha256:test',
    { kubectl: kubectl(), decryptor },
  );

async function buildError(files: Record<string, string>, overrides: Record<string, unknown> = {}) {
  const error = await build(files, overrides).then(
    () => new Error('expected the build to fail'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof SluiceError)) throw error;
  expect(error.message).not.toContain(PLAINTEXT_MARKER);
  return error;
}

/** A built Secret's values in plain text: its `data` decoded (the build moves `stringData` there, as Flux does). */
const secretValues = (secret: Record<string, unknown> | undefined): Record<string, string> | undefined =>
  secret && {
    ...Object.fromEntries(
      Object.entries((secret.data as Record<string, string> | undefined) ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value, 'base64').toString('utf8'),
      ]),
    ),
    ...(secret.stringData as Record<string, string> | undefined),
  };

/** CPU time (ms) this process spent since `started` (process.cpuUsage()): the wall clock also counts other processes' turns on a shared machine. */
const cpuMsSince = (started: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
};

const stringData = (objects: readonly Manifest[], name: string) =>
  secretValues(byName(objects)[`Secret/${name}`]) as Record<string, string>;

describe('decrypting sops files', () => {
  it('decrypts a Secret whose data key KMS opens under its encryption context, keeping key order for the MAC', async () => {
    const objects = await build({ 'secret.yaml': sopsFixture('kms-secret.yaml') });
    expect(objects).toHaveLength(1);
    expect(objects[0]!.object.sops).toBeUndefined();
    expect(stringData(objects, 'db-credentials')).toEqual({
      username: 'admin',
      password: `${PLAINTEXT_MARKER}-kms-password`,
      '1': `${PLAINTEXT_MARKER}-digit-key`,
    });
    expect(byName(objects)['Secret/db-credentials']!.metadata!.labels).toEqual({ app: 'db' });
  });

  it('decrypts a file whose encrypted_regex nests quantifiers (^(a+)+$) as sops did, within a second', async () => {
    const started = process.cpuUsage();
    const objects = await build({ 'secret.yaml': sopsFixture('nested-quantifier.yaml') });
    const elapsed = cpuMsSince(started);
    // sops (Go's regexp) encrypted the value of `aaaa` and left the other key's alone.
    expect(stringData(objects, 'nested-quantifier')).toEqual({
      aaaa: `${PLAINTEXT_MARKER}-nested`,
      [NESTED_QUANTIFIER_KEY]: 'not-secret',
    });
    expect(elapsed).toBeLessThan(1000);
  });

  it('decrypts base64 data with an age identity from Secrets Manager', async () => {
    const objects = await build({ 'token.yaml': sopsFixture('age-secret.yaml') });
    const data = byName(objects)['Secret/api-token']!.data as Record<string, string>;
    expect(Buffer.from(data.token!, 'base64').toString()).toBe(`${PLAINTEXT_MARKER}-age-token`);
  });

  it('decrypts a wholly encrypted document, a multi-document file and a JSON file with mac_only_encrypted', async () => {
    const objects = await build({
      'whole.yaml': sopsFixture('whole-secret.yaml'),
      'multi.yaml': sopsFixture('multi-document.yaml'),
      'json.json': sopsFixture('json-secret.json'),
      'plain.yaml': configMap('plain', { a: 'b' }),
    });
    expect(stringData(objects, 'whole')).toEqual({ key: `${PLAINTEXT_MARKER}-whole` });
    expect(stringData(objects, 'first')).toEqual({ value: `${PLAINTEXT_MARKER}-first` });
    expect(stringData(objects, 'second')).toEqual({ value: `${PLAINTEXT_MARKER}-second` });
    expect(stringData(objects, 'json-secret')).toEqual({ value: `${PLAINTEXT_MARKER}-json` });
    expect(byName(objects)['ConfigMap/plain']!.data).toEqual({ a: 'b' });
  });

  it('decrypts what kustomize built (keys reordered, labels added): the MAC is checked on the file', async () => {
    const objects = await build(
      {
        'app/kustomization.yaml': 'commonLabels: { team: a }\nresources: [secret.yaml]\n',
        'app/secret.yaml': sopsFixture('kms-secret.yaml'),
      },
      { path: 'app', targetNamespace: 'prod' },
    );
    const secret = byName(objects)['Secret/db-credentials']!;
    expect(secret.metadata).toMatchObject({ labels: { app: 'db', team: 'a' } });
    expect(secretValues(secret)?.password).toBe(`${PLAINTEXT_MARKER}-kms-password`);
  });

  it('kustomize (the build and the delivery patches, which run on files) sees only encrypted values', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-kubectl-'));
    const seen = join(dir, 'seen');
    const [FIND, CAT] = ['find', 'cat'].map((tool) =>
      execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(),
    );
    // kubectl that records every file of the temp folder kustomize is run in, then runs the real one.
    const spy = join(dir, 'kubectl');
    const tmp = tmpdir();
    writeFileSync(
      spy,
      // Absolute paths: kustomize's child runs with nothing on PATH.
      `#!/bin/sh\nrel=\${2#${tmp}/}\n${FIND} "${tmp}/\${rel%%/*}" -type f -exec ${CAT} {} + >> ${seen}\nexec ${kubectl()} "$@"\n`,
      { mode: 0o755 },
    );
    try {
      const objects = await buildManifests(
        artifact({
          'app/kustomization.yaml': 'resources: [secret.yaml]\n',
          'app/secret.yaml': sopsFixture('kms-secret.yaml'),
        }),
        deliveryWith({
          path: 'app',
          decryption: sopsDecryption(ageSecret),
          patches: [
            {
              patch:
                'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n  labels: { patched: "yes" }\n',
            },
          ],
        }),
        'main@sha256:test',
        { kubectl: spy, decryptor },
      );
      expect(stringData(objects, 'db-credentials').password).toBe(`${PLAINTEXT_MARKER}-kms-password`);
      const given = readFileSync(seen, 'utf8');
      expect(given).toContain('ENC[AES256_GCM');
      expect(given).toContain('patched');
      expect(given).not.toContain(PLAINTEXT_MARKER);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies the delivery patches and substitution to the decrypted values', async () => {
    const objects = await build(
      { 'secret.yaml': sopsFixture('age-secret.yaml') },
      {
        patches: [
          {
            patch:
              'apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\n  labels: { patched: "yes" }\n',
          },
        ],
      },
    );
    expect(byName(objects)['Secret/api-token']!.metadata!.labels).toEqual({ patched: 'yes' });
  });
});

describe('refusing what cannot be decrypted, naming the file', () => {
  const kms = sopsFixture('kms-secret.yaml');

  it('an encrypted document in a delivery without decryption', async () => {
    const error = await buildError({ 'secret.yaml': kms }, { decryption: undefined });
    expect(error.message).toMatch(
      /^secret\.yaml: Secret\/db-credentials is SOPS-encrypted, but delivery 'build-test' has no decryption/,
    );
  });

  it('a KMS key the delivery does not name', async () => {
    const error = await buildError(
      { 'secret.yaml': sopsFixture('other-kms-key.yaml') },
      { decryption: sopsDecryption(undefined) },
    );
    expect(error.message).toContain('secret.yaml: Secret/db-credentials: SOPS decryption failed');
    expect(error.message).toContain(
      `encrypted for KMS key ${LOCAL_KMS_KEYS.other}, none of which the delivery's decryption names`,
    );
  });

  it('a KMS key the delivery names but the reconcile cannot use (wrong key material)', async () => {
    // The file names the fixtures key, but its data key was encrypted with the other one.
    const swapped = kms.replace(
      /enc: \S+/,
      `enc: ${/enc: (\S+)/.exec(sopsFixture('other-kms-key.yaml'))![1]}`,
    );
    const error = await buildError({ 'secret.yaml': swapped });
    expect(error.message).toMatch(
      /secret\.yaml: Secret\/db-credentials: SOPS decryption failed: no key opens its data key \(KMS key arn:aws:kms:\S+: \w+/,
    );
  });

  it('a changed encryption context (KMS refuses it)', async () => {
    const error = await buildError({ 'secret.yaml': kms.replace('purpose: fixtures', 'purpose: other') });
    expect(error.message).toMatch(
      /secret\.yaml: Secret\/db-credentials: SOPS decryption failed: no key opens its data key/,
    );
  });

  it('an age identity that is not the recipient', async () => {
    const error = await buildError({ 'token.yaml': sopsFixture('other-age-recipient.yaml') });
    expect(error.message).toContain(
      'token.yaml: Secret/api-token: SOPS decryption failed: no key opens its data key (age recipient age1',
    );
  });

  it('a tampered encrypted value', async () => {
    const tampered = kms.replace(
      /(password: ENC\[AES256_GCM,data:)(.)/,
      (_, head: string, c: string) => `${head}${c === 'A' ? 'B' : 'A'}`,
    );
    const error = await buildError({ 'secret.yaml': tampered });
    expect(error.message).toBe(
      'secret.yaml: Secret/db-credentials: SOPS decryption failed: stringData.password: does not decrypt with the data key (tampered with, or moved from another path); nothing was applied',
    );
  });

  it('an encrypted value moved to another key', async () => {
    const username = /username: (ENC\[[^\]]+\])/.exec(kms)![1]!;
    const moved = kms.replace(/password: ENC\[[^\]]+\]/, `password: ${username}`);
    const error = await buildError({ 'secret.yaml': moved });
    expect(error.message).toContain('stringData.password: does not decrypt with the data key');
  });

  // The rule is not covered by the MAC and is needed to compute it: a changed one is evaluated
  // (Go's regexp, linear, bounded) before the MAC refuses the file.
  const withRule = (rule: string) =>
    `${NESTED_QUANTIFIER_KEY}: x\n${kms.replace('encrypted_regex: ^(data|stringData)$', rule)}`;

  it('an encrypted_regex changed to nested quantifiers, with a key it backtracks on: the MAC, within a second', async () => {
    const started = process.cpuUsage();
    const error = await buildError({ 'secret.yaml': withRule('encrypted_regex: ^(a+)+$') });
    expect(error.message).toBe(
      'secret.yaml: Secret/db-credentials: SOPS decryption failed: MAC mismatch: the file was changed after sops encrypted it; nothing was applied',
    );
    expect(cpuMsSince(started)).toBeLessThan(1000);
  });

  it('an unencrypted_regex of nested quantifiers, with a key it backtracks on: that value is not encrypted, within a second', async () => {
    const started = process.cpuUsage();
    const error = await buildError({ 'secret.yaml': withRule('unencrypted_regex: ^(a+)+$') });
    expect(error.message).toBe(
      `secret.yaml: Secret/db-credentials: SOPS decryption failed: ${NESTED_QUANTIFIER_KEY}: is not a sops-encrypted value (ENC[AES256_GCM,…]); nothing was applied`,
    );
    expect(cpuMsSince(started)).toBeLessThan(1000);
  });

  it('an encrypted_regex that is not Go regexp syntax (a backreference)', async () => {
    const error = await buildError({ 'secret.yaml': withRule('encrypted_regex: (a)\\1') });
    expect(error.message).toBe(
      "secret.yaml: Secret/db-credentials: SOPS decryption failed: has an encrypted_regex that is not a regular expression in Go's syntax, as sops reads it: error parsing regexp: invalid escape sequence: `\\1`; nothing was applied",
    );
  });

  it('a changed unencrypted value (the MAC covers it)', async () => {
    const error = await buildError({ 'secret.yaml': kms.replace('app: db', 'app: exfiltrate') });
    expect(error.message).toBe(
      'secret.yaml: Secret/db-credentials: SOPS decryption failed: MAC mismatch: the file was changed after sops encrypted it; nothing was applied',
    );
  });

  it('a removed value (the MAC covers it)', async () => {
    const error = await buildError({ 'secret.yaml': kms.replace(/ {4}username: ENC\[[^\]]+\]\n/, '') });
    expect(error.message).toContain('MAC mismatch');
  });

  it('a missing MAC', async () => {
    const error = await buildError({ 'secret.yaml': kms.replace(/ {4}mac: ENC\[[^\]]+\]\n/, '') });
    expect(error.message).toBe(
      'secret.yaml: Secret/db-credentials: SOPS decryption failed: has no MAC (sops.mac): refusing a file whose integrity cannot be checked; nothing was applied',
    );
  });

  it('an altered MAC', async () => {
    const other = /mac: (ENC\[[^\]]+\])/.exec(sopsFixture('other-kms-key.yaml'))![1]!;
    // Alter the MAC in the built object only: the file's MAC no longer matches any file.
    const error = await buildError({ 'secret.yaml': kms.replace(/mac: ENC\[[^\]]+\]/, `mac: ${other}`) });
    expect(error.message).toMatch(
      /secret\.yaml: Secret\/db-credentials: SOPS decryption failed: its MAC \(sops\.mac\) does not decrypt/,
    );
  });

  it.each([
    ['a kustomization namespace', 'namespace: prod\n', 'Secret/prod/db-credentials'],
    ['a namePrefix', 'namePrefix: x-\n', 'Secret/x-db-credentials'],
  ])('a Secret the build moves (%s): not decrypted', async (_, extra, object) => {
    const error = await buildError(
      {
        'app/kustomization.yaml': `${extra}resources: [secret.yaml]\n`,
        'app/secret.yaml': kms,
      },
      { path: 'app' },
    );
    expect(error.message).toBe(
      `app/secret.yaml: ${object}: SOPS decryption failed: the build made it something other than a Secret (v1) its file declares (app/secret.yaml): ` +
        'only a Secret of the apiVersion, kind, namespace and name written in its encrypted file is decrypted ' +
        '(a kustomize patch, namespace, namePrefix or nameSuffix must not change them; set the namespace in the file, or targetNamespace); nothing was applied',
    );
  });

  it('a file encrypted only for PGP', async () => {
    const pgp = kms.replace(
      / {4}kms:\n(?: {6,}.*\n)+/,
      '    pgp:\n        - fp: 0123456789ABCDEF\n          enc: x\n',
    );
    const error = await buildError({ 'secret.yaml': pgp });
    expect(error.message).toContain('is encrypted only for PGP, which sluice does not support');
  });
});
