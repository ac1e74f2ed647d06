import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { sha256Digest } from './digest.ts';
import { describeReference } from './reference.ts';
import { artifactError, RegistryError } from './errors.ts';
import type { KmsPublicKeys } from './kms-public-keys.ts';
import type { RegistryClient } from './registry-client.ts';
import type { SignatureVerification, SignedBy } from './source.ts';

/** The layer annotation holding the base64 signature of the layer's payload. */
export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
const COSIGN_PAYLOAD_TYPE = 'cosign container image signature';
const MAX_SIGNATURES = 32;
const MAX_PAYLOAD_BYTES = 64 * 1024;

interface SignatureLayer {
  readonly digest?: string;
  readonly size?: number;
  readonly annotations?: Record<string, string>;
}

/** `sha256:<hex>` → `sha256-<hex>.sig`: the tag cosign stores an artifact's signatures under. */
export function signatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}

/** What is wrong with a PEM public key, or undefined when Node.js can use it. */
export function publicKeyProblem(pem: string): string | undefined {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType ? undefined : 'is not an asymmetric public key';
  } catch (error) {
    return `is not a PEM public key (${(error as Error).message})`;
  }
}

/** ECDSA and RSA keys sign the payload's SHA-256; Ed25519 signs the payload itself. */
function verifiesWith(key: KeyObject, payload: Buffer, signature: Buffer): boolean {
  const algorithm = key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
  try {
    return verify(algorithm, payload, key, signature);
  } catch {
    return false;
  }
}

/** Why a signature payload does not vouch for `digest`, or undefined when it does. */
function payloadProblem(payload: Buffer, digest: string): string | undefined {
  let parsed: { critical?: { type?: unknown; image?: Record<string, unknown> } };
  try {
    parsed = JSON.parse(payload.toString('utf8')) as typeof parsed;
  } catch {
    return 'its payload is not JSON';
  }
  const critical = parsed.critical;
  if (critical?.type !== COSIGN_PAYLOAD_TYPE)
    return `its payload's critical.type is not "${COSIGN_PAYLOAD_TYPE}"`;
  const signed = critical.image?.['docker-manifest-digest'];
  if (signed !== digest)
    return `it signs ${typeof signed === 'string' ? signed : 'no digest'}, not ${digest}`;
  return undefined;
}

/** Who may have signed: which of them made a signature, and how to name them when none did. */
interface Signers {
  readonly signerOf: (payload: Buffer, signature: Buffer) => string | undefined;
  readonly named: string;
}

/** A public key's SHA-256 fingerprint, over its DER SubjectPublicKeyInfo (as `cosign public-key` prints it). */
export function keyFingerprint(key: KeyObject): string {
  return `sha256:${createHash('sha256')
    .update(key.export({ format: 'der', type: 'spki' }))
    .digest('hex')}`;
}

/**
 * The signers `verification` trusts: its PEM public keys, or its KMS key's public half as
 * GetPublicKey gives it (through `kmsKeys`, which keeps it). A KMS key that cannot be read or is
 * not one cosign signs with refuses the artifact, naming the key and the artifact.
 */
async function signersOf(
  verification: Exclude<Extract<SignatureVerification, { provider: 'cosign' }>, { keyless: unknown }>,
  label: string,
  kmsKeys: KmsPublicKeys | undefined,
): Promise<Signers> {
  if ('publicKeys' in verification) {
    const keys = verification.publicKeys.map((pem) => createPublicKey(pem));
    return {
      signerOf: (payload, signature) => {
        const key = keys.find((candidate) => verifiesWith(candidate, payload, signature));
        return key && keyFingerprint(key);
      },
      named: `made by none of the ${keys.length} public key(s)`,
    };
  }
  const arn = verification.kmsKeyArn;
  if (!kmsKeys)
    throw artifactError(`${label}: cannot verify it against KMS key ${arn}: this run has no KMS client`);
  try {
    const key = await kmsKeys.key(arn);
    return {
      signerOf: (payload, signature) => (key.verifies(payload, signature) ? arn : undefined),
      named: `not made by KMS key ${arn}`,
    };
  } catch (error) {
    throw artifactError(
      `${label}: cannot verify it against KMS key ${arn}: reading its public key failed (${(error as Error).message}); nothing is applied until it can be read`,
    );
  }
}

/**
 * Checks that `digest` in `repository` carries a cosign signature (tag-based discovery:
 * `sha256-<hex>.sig`) made by one of the public keys, by the KMS key, or keyless by the identity
 * (oci/keyless.ts): the signature verifies over the payload, and the payload names this very
 * digest. Returns who signed; fails naming the artifact and what was wrong with each signature.
 */
export async function verifyCosignSignature(
  client: RegistryClient,
  repository: string,
  digest: string,
  verification: Extract<SignatureVerification, { provider: 'cosign' }>,
  kmsKeys?: KmsPublicKeys,
): Promise<SignedBy> {
  const label = describeReference(client.host, repository, digest);
  const signers = 'keyless' in verification ? undefined : await signersOf(verification, label, kmsKeys);
  const tag = signatureTag(digest);
  let body: Buffer;
  try {
    body = (await client.getManifest(repository, tag)).body;
  } catch (error) {
    if (error instanceof RegistryError && error.status === 404)
      throw artifactError(`${label}: is not signed: there is no cosign signature (tag ${tag} not found)`);
    throw error;
  }
  let layers: SignatureLayer[];
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { layers?: unknown };
    layers = Array.isArray(parsed.layers) ? (parsed.layers as SignatureLayer[]) : [];
  } catch {
    throw artifactError(`${label}: the signature manifest ${tag} is not JSON`);
  }
  const signatures = layers.filter(
    (layer) => typeof layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION] === 'string',
  );
  if (signatures.length === 0)
    throw artifactError(`${label}: the signature manifest ${tag} holds no cosign signature`);

  const problems: string[] = [];
  for (const [index, layer] of signatures.slice(0, MAX_SIGNATURES).entries()) {
    const what = `signature ${index + 1}`;
    if (typeof layer.digest !== 'string' || !/^sha256:[a-f0-9]{64}$/.test(layer.digest)) {
      problems.push(`${what}: no valid payload digest`);
      continue;
    }
    const payload = await client.getBlob(
      repository,
      layer.digest,
      MAX_PAYLOAD_BYTES,
      'the signature payload limit',
    );
    if (sha256Digest(payload) !== layer.digest) {
      problems.push(`${what}: its payload's sha256 is not ${layer.digest}`);
      continue;
    }
    const annotations = layer.annotations!;
    const encoded = annotations[COSIGN_SIGNATURE_ANNOTATION]!;
    let signer: string | undefined;
    if (signers) {
      signer = signers.signerOf(payload, Buffer.from(encoded, 'base64'));
      if (signer === undefined) {
        problems.push(`${what}: ${signers.named}`);
        continue;
      }
    } else {
      const { keyless, trustedRoot } = verification as Extract<SignatureVerification, { keyless: unknown }>;
      const { verifyKeylessLayer } = await import('./keyless.ts');
      const outcome = verifyKeylessLayer(annotations, payload, encoded, keyless, trustedRoot);
      if ('problem' in outcome) {
        problems.push(`${what}: ${outcome.problem}`);
        continue;
      }
      signer = outcome.signer;
    }
    const problem = payloadProblem(payload, digest);
    if (!problem) return { provider: 'cosign', signer };
    problems.push(`${what}: ${problem}`);
  }
  throw artifactError(`${label}: no cosign signature verifies (${problems.join('; ')})`);
}
