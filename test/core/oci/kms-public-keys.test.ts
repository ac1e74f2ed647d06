// What a GetPublicKey answer must be for cosign signatures to be verified against it (pure: answers
// as plain values, keys and signatures made with node:crypto), the KMS key ARNs `verify.kmsKeyArn`
// takes, and the config's verify block. Signatures by the real cosign on local-kms:
// verify-kms.test.ts.
import { constants, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseDelivery } from '../../../functions/core/config/index.ts';
import { kmsKeyArnProblem, parseKmsKeyArn } from '../../../functions/core/oci/kms-key-arn.ts';
import {
  cosignKmsKey,
  KmsPublicKeys,
  type KmsPublicKeyAnswer,
} from '../../../functions/core/oci/kms-public-keys.ts';

const ARN = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const payload = Buffer.from('{"critical":{"type":"cosign container image signature"}}');

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecOther = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const der = (key: KeyObject) => key.export({ type: 'spki', format: 'der' });

const answer = (fields: Partial<KmsPublicKeyAnswer> = {}): KmsPublicKeyAnswer => ({
  keyId: ARN,
  keyUsage: 'SIGN_VERIFY',
  keySpec: 'ECC_NIST_P256',
  signingAlgorithms: ['ECDSA_SHA_256'],
  publicKey: der(ec.publicKey),
  ...fields,
});
const rsaAnswer = (first: string) =>
  answer({
    keySpec: 'RSA_2048',
    signingAlgorithms: [first, 'RSASSA_PSS_SHA_384', 'RSASSA_PKCS1_V1_5_SHA_512'],
    publicKey: der(rsa.publicKey),
  });
const pss = sign('sha256', payload, {
  key: rsa.privateKey,
  padding: constants.RSA_PKCS1_PSS_PADDING,
  saltLength: 32,
});
const pkcs1 = sign('sha256', payload, { key: rsa.privateKey, padding: constants.RSA_PKCS1_PADDING });

describe('a KMS key cosign signatures are verified against', () => {
  it('ECC_NIST_P256 with ECDSA_SHA_256: its signature over the payload verifies, another key’s does not', () => {
    const key = cosignKmsKey(ARN, answer());
    expect(key).toMatchObject({ keySpec: 'ECC_NIST_P256', signingAlgorithm: 'ECDSA_SHA_256' });
    expect(key.verifies(payload, sign('sha256', payload, ec.privateKey))).toBe(true);
    expect(key.verifies(payload, sign('sha256', payload, ecOther.privateKey))).toBe(false);
    expect(key.verifies(Buffer.from(`${payload.toString()} `), sign('sha256', payload, ec.privateKey))).toBe(
      false,
    );
    expect(key.verifies(payload, Buffer.from('not a signature'))).toBe(false);
  });

  it('RSA verifies with the key’s first algorithm only, as cosign signs with it (PSS or PKCS#1 v1.5)', () => {
    const withPss = cosignKmsKey(ARN, rsaAnswer('RSASSA_PSS_SHA_256'));
    expect(withPss.verifies(payload, pss)).toBe(true);
    expect(withPss.verifies(payload, pkcs1)).toBe(false);
    const withPkcs1 = cosignKmsKey(ARN, rsaAnswer('RSASSA_PKCS1_V1_5_SHA_256'));
    expect(withPkcs1.verifies(payload, pkcs1)).toBe(true);
    expect(withPkcs1.verifies(payload, pss)).toBe(false);
  });

  it('refuses a key whose KeyUsage is not SIGN_VERIFY, even with signing algorithms and a public key that verifies', () => {
    expect(() => cosignKmsKey(ARN, answer({ keyUsage: 'ENCRYPT_DECRYPT' }))).toThrow(
      `KMS key ${ARN} has KeyUsage ENCRYPT_DECRYPT, not SIGN_VERIFY: it is not a signing key`,
    );
    expect(() => cosignKmsKey(ARN, answer({ keyUsage: undefined }))).toThrow('has KeyUsage (none)');
  });

  it('refuses an answer for another key', () => {
    const other = ARN.replace('1234abcd', 'ffffffff');
    expect(() => cosignKmsKey(ARN, answer({ keyId: other }))).toThrow(
      `KMS key ${ARN} was answered for another key (${other})`,
    );
  });

  it.for([
    ['ECC_NIST_P384', ['ECDSA_SHA_384']],
    ['ECC_SECG_P256K1', ['ECDSA_SHA_256']],
    ['RSA_2048', ['RSASSA_PSS_SHA_384', 'RSASSA_PSS_SHA_256']],
    ['ML_DSA_65', ['ML_DSA_SHAKE_256']],
    ['ECC_NIST_P256', []],
  ] as const)('refuses %s signing first with %j: not what sluice verifies', ([keySpec, algorithms]) => {
    expect(() => cosignKmsKey(ARN, answer({ keySpec, signingAlgorithms: algorithms }))).toThrow(
      `KMS key ${ARN} is ${keySpec} signing with ${algorithms[0] ?? '(none)'} first, which sluice does not verify`,
    );
  });

  it('refuses a public key that is not of the spec KMS names, or none', () => {
    expect(() => cosignKmsKey(ARN, answer({ publicKey: der(rsa.publicKey) }))).toThrow(
      `KMS key ${ARN} is said to be ECC_NIST_P256 but its public key is rsa 2048`,
    );
    expect(() => cosignKmsKey(ARN, { ...rsaAnswer('RSASSA_PSS_SHA_256'), keySpec: 'RSA_4096' })).toThrow(
      'is said to be RSA_4096 but its public key is rsa 2048',
    );
    expect(() => cosignKmsKey(ARN, answer({ publicKey: undefined }))).toThrow('has no public key');
    expect(() => cosignKmsKey(ARN, answer({ publicKey: Buffer.from('junk') }))).toThrow(
      'has a public key that is not DER SubjectPublicKeyInfo',
    );
  });
});

describe('KmsPublicKeys', () => {
  it('reads each key once while it lives; a failed read is not kept', async () => {
    const reads: string[] = [];
    let fail = true;
    const keys = new KmsPublicKeys(async (arn) => {
      reads.push(arn);
      if (fail) throw new Error('AccessDeniedException: not allowed');
      return answer();
    });
    await expect(keys.key(ARN)).rejects.toThrow('AccessDeniedException');
    fail = false;
    const [a, b] = await Promise.all([keys.key(ARN), keys.key(ARN)]);
    expect(a).toBe(b);
    await keys.key(ARN);
    expect(reads).toEqual([ARN, ARN]);
  });

  it('keeps each key apart: a signature by one does not verify under another', async () => {
    const second = ARN.replace('1234abcd', 'ffffffff');
    const keys = new KmsPublicKeys(async (arn) =>
      arn === ARN ? answer() : answer({ keyId: second, publicKey: der(ecOther.publicKey) }),
    );
    const byFirst = sign('sha256', payload, ec.privateKey);
    expect((await keys.key(ARN)).verifies(payload, byFirst)).toBe(true);
    expect((await keys.key(second)).verifies(payload, byFirst)).toBe(false);
    expect((await keys.key(second)).verifies(payload, sign('sha256', payload, ecOther.privateKey))).toBe(
      true,
    );
  });

  it('a key that is not one cosign signs with is refused each time it is asked for', async () => {
    let reads = 0;
    const keys = new KmsPublicKeys(async () => (reads++, answer({ keyUsage: 'ENCRYPT_DECRYPT' })));
    await expect(keys.key(ARN)).rejects.toThrow('not a signing key');
    await expect(keys.key(ARN)).rejects.toThrow('not a signing key');
    expect(reads).toBe(2);
  });
});

describe('KMS key ARNs', () => {
  it.for([
    ARN,
    'arn:aws:kms:us-east-1:111122223333:key/mrk-1234abcd12ab34cd56ef1234567890ab',
    'arn:aws-cn:kms:cn-north-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    'arn:aws-us-gov:kms:us-gov-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
  ])('takes %s', (arn) => {
    expect(kmsKeyArnProblem(arn)).toBeUndefined();
  });

  it('parses the partition, Region, account and key id', () => {
    expect(parseKmsKeyArn(ARN)).toEqual({
      partition: 'aws',
      region: 'eu-west-1',
      account: '111122223333',
      keyId: '1234abcd-12ab-34cd-56ef-1234567890ab',
    });
  });

  it.for([
    [
      'arn:aws:kms:eu-west-1:111122223333:alias/signing',
      /is an alias; name the key's ARN .*describe-key --key-id alias\/signing/,
    ],
    ['alias/signing', /is an alias/],
    ['1234abcd-12ab-34cd-56ef-1234567890ab', /is not an ARN; name the key by its ARN/],
    [
      'arn:aws-iso:kms:us-iso-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      /is in partition aws-iso, where cosign's awskms:\/\/ keys cannot be/,
    ],
    [
      'arn:aws-cn:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      /names Region us-east-1, which is not in partition aws-cn \(it is in aws\)/,
    ],
    ['arn:aws:kms:eu-west-1:1111:key/1234abcd-12ab-34cd-56ef-1234567890ab', /is not a KMS key ARN/],
    ['arn:aws:kms:eu-west-1:111122223333:key/1234ABCD-12ab-34cd-56ef-1234567890ab', /is not a KMS key ARN/],
    ['arn:aws:kms:eu-west-1:111122223333:key/not-a-key-id', /is not a KMS key ARN/],
  ] as const)('refuses %s', ([arn, problem]) => {
    expect(kmsKeyArnProblem(arn)).toMatch(problem);
    expect(parseKmsKeyArn(arn)).toBeUndefined();
  });
});

describe('the verify block', () => {
  const parse = (verify: Record<string, unknown>) =>
    parseDelivery({
      name: 'x',
      source: { url: 'oci://registry.example.com/a', verify },
      cluster: { kubeconfig: './k' },
    });
  const issuesOf = (verify: Record<string, unknown>) => {
    try {
      parse(verify);
    } catch (error) {
      if (error instanceof ConfigError) return error.issues;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };
  const PEM = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  it('takes kmsKeyArn alone, and publicKeys alone', () => {
    expect(parse({ provider: 'cosign', kmsKeyArn: ARN }).source.verify).toEqual({
      provider: 'cosign',
      kmsKeyArn: ARN,
    });
    expect(parse({ provider: 'cosign', publicKeys: [PEM] }).source.verify).toEqual({
      provider: 'cosign',
      publicKeys: [PEM],
    });
  });

  it('refuses both, and neither, naming the verify block', () => {
    expect(issuesOf({ provider: 'cosign', kmsKeyArn: ARN, publicKeys: [PEM] })).toEqual([
      {
        path: 'source.verify',
        message: expect.stringContaining(
          'set one of publicKeys, kmsKeyArn and keyless, not publicKeys and kmsKeyArn',
        ),
      },
    ]);
    expect(issuesOf({ provider: 'cosign' })).toEqual([
      { path: 'source.verify', message: expect.stringContaining('name the signer: publicKeys') },
    ]);
  });

  it('refuses an alias, naming the field', () => {
    expect(
      issuesOf({ provider: 'cosign', kmsKeyArn: 'arn:aws:kms:eu-west-1:111122223333:alias/sign' }),
    ).toEqual([{ path: 'source.verify.kmsKeyArn', message: expect.stringContaining('is an alias') }]);
  });
});
