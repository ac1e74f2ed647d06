import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';

/** What KMS GetPublicKey answers, as much as sluice reads of it. */
export interface KmsPublicKeyAnswer {
  readonly keyId?: string;
  readonly keyUsage?: string;
  readonly keySpec?: string;
  readonly signingAlgorithms?: readonly string[];
  /** DER SubjectPublicKeyInfo. */
  readonly publicKey?: Uint8Array;
}

/** kms:GetPublicKey of one key, by its ARN (in the key's own Region). */
export type GetKmsPublicKey = (keyArn: string) => Promise<KmsPublicKeyAnswer>;

/** A KMS key's public half, checked to be one cosign signs with, and how its signatures verify. */
export interface CosignKmsKey {
  readonly keyArn: string;
  readonly keySpec: string;
  readonly signingAlgorithm: string;
  /** Whether `signature` is this key's, made the way cosign makes it, over `payload`. */
  verifies(payload: Buffer, signature: Buffer): boolean;
}

const RSA_SPECS: Record<string, number> = { RSA_2048: 2048, RSA_3072: 3072, RSA_4096: 4096 };

/**
 * How cosign signs with each KMS key spec: with the first of the key's signing algorithms
 * (sigstore's kms/aws takes `SigningAlgorithms[0]`), over the payload's SHA-256. Only these are
 * accepted; anything else is refused rather than guessed at.
 */
const ACCEPTED: Record<string, readonly string[]> = {
  ECC_NIST_P256: ['ECDSA_SHA_256'],
  RSA_2048: ['RSASSA_PKCS1_V1_5_SHA_256', 'RSASSA_PSS_SHA_256'],
  RSA_3072: ['RSASSA_PKCS1_V1_5_SHA_256', 'RSASSA_PSS_SHA_256'],
  RSA_4096: ['RSASSA_PKCS1_V1_5_SHA_256', 'RSASSA_PSS_SHA_256'],
};

function verifierFor(key: KeyObject, algorithm: string): (payload: Buffer, signature: Buffer) => boolean {
  // PSS: the salt length is read from the signature, as Go's rsa.VerifyPSS does with no options
  // (what sigstore's verifier passes); KMS signs with a salt as long as the hash.
  const options =
    algorithm === 'RSASSA_PSS_SHA_256'
      ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }
      : algorithm === 'RSASSA_PKCS1_V1_5_SHA_256'
        ? { key, padding: constants.RSA_PKCS1_PADDING }
        : { key, dsaEncoding: 'der' as const };
  return (payload, signature) => {
    try {
      return verify('sha256', payload, options, signature);
    } catch {
      return false;
    }
  };
}

/**
 * The key GetPublicKey described, or an Error saying why it is not one cosign signatures can be
 * verified against: the answer must be for this very key, for signing (KeyUsage SIGN_VERIFY), of
 * a spec and first signing algorithm in ACCEPTED, with a public key of that spec.
 */
export function cosignKmsKey(keyArn: string, answer: KmsPublicKeyAnswer): CosignKmsKey {
  const refuse = (why: string) => new Error(`KMS key ${keyArn} ${why}`);
  if (answer.keyId !== keyArn) throw refuse(`was answered for another key (${answer.keyId ?? 'none named'})`);
  if (answer.keyUsage !== 'SIGN_VERIFY')
    throw refuse(`has KeyUsage ${answer.keyUsage ?? '(none)'}, not SIGN_VERIFY: it is not a signing key`);
  const spec = answer.keySpec ?? '(none)';
  const algorithm = answer.signingAlgorithms?.[0] ?? '(none)';
  const accepted = ACCEPTED[spec];
  if (!accepted?.includes(algorithm))
    throw refuse(
      `is ${spec} signing with ${algorithm} first, which sluice does not verify (it verifies ECC_NIST_P256 with ECDSA_SHA_256, and RSA_2048/3072/4096 with RSASSA_PKCS1_V1_5_SHA_256 or RSASSA_PSS_SHA_256: the algorithm cosign signs with is the key's first)`,
    );
  if (!answer.publicKey) throw refuse('has no public key in its GetPublicKey answer');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(answer.publicKey), format: 'der', type: 'spki' });
  } catch (error) {
    throw refuse(`has a public key that is not DER SubjectPublicKeyInfo (${(error as Error).message})`);
  }
  const details = key.asymmetricKeyDetails ?? {};
  const fits =
    spec === 'ECC_NIST_P256'
      ? key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1'
      : key.asymmetricKeyType === 'rsa' && details.modulusLength === RSA_SPECS[spec];
  if (!fits)
    throw refuse(
      `is said to be ${spec} but its public key is ${key.asymmetricKeyType ?? 'unknown'} ${details.namedCurve ?? details.modulusLength ?? ''}`.trimEnd(),
    );
  return { keyArn, keySpec: spec, signingAlgorithm: algorithm, verifies: verifierFor(key, algorithm) };
}

/**
 * The public keys of KMS keys, read with GetPublicKey once per key and kept while this object
 * lives (a warm function instance): the public half of a KMS asymmetric key never changes (KMS does
 * not rotate asymmetric keys, and their imported material cannot be replaced by other material),
 * so a new signing key is a new ARN in the config, read when first named. A read that fails is
 * not kept: the next verification asks again, and fails closed until KMS answers.
 */
export class KmsPublicKeys {
  private readonly keys = new Map<string, Promise<CosignKmsKey>>();
  constructor(private readonly read: GetKmsPublicKey) {}

  key(keyArn: string): Promise<CosignKmsKey> {
    let key = this.keys.get(keyArn);
    if (!key) {
      key = this.read(keyArn).then((answer) => cosignKmsKey(keyArn, answer));
      this.keys.set(keyArn, key);
      key.catch(() => this.keys.delete(keyArn));
    }
    return key;
  }
}
