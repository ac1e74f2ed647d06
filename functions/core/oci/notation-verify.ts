// Notation signatures of an artifact, found and verified as notation-go does (notation.Verify and
// verifier.Verify): the signatures the referrers API (or the referrers tag schema) lists, each
// tried until one passes integrity, authenticity, trusted identity, expiry, the authentic signing
// time, revocation, and names this very artifact.
import { X509Certificate } from 'node:crypto';
import { sha256Digest } from './digest.ts';
import { artifactError, RegistryError } from './errors.ts';
import {
  AWS_SIGNER_PLUGIN,
  certificateHashes,
  NOTATION_PLATFORM,
  SIGNING_JOB,
  SIGNING_PROFILE_VERSION,
  type GetRevocationStatus,
} from './notation-aws-signer.ts';
import { validityProblem, type ChainCertificate } from './notation-chain.ts';
import {
  readEnvelope,
  SCHEME_SIGNING_AUTHORITY,
  SCHEME_X509,
  VERIFICATION_PLUGIN,
  type NotationEnvelope,
} from './notation-envelope.ts';
import {
  isSubsetDN,
  parseDistinguishedName,
  pemBlocks,
  profileMatches,
  type NotationVerification,
} from './notation-policy.ts';
import { describeReference } from './reference.ts';
import type { RegistryClient } from './registry-client.ts';
import type { SignedBy } from './source.ts';

export const NOTARY_SIGNATURE_TYPE = 'application/vnd.cncf.notary.signature';
/** Signatures tried at most (notation verify's --max-signatures is 100; cosign's here is 32). */
const MAX_SIGNATURES = 32;
/** An envelope with a chain of a few certificates is a few KiB. */
const MAX_ENVELOPE_BYTES = 256 * 1024;
const VERIFICATION_PLUGIN_MIN_VERSION = 'io.cncf.notary.verificationPluginMinVersion';

/** The artifact's manifest as Notation signs it: the descriptor in the payload's targetArtifact. */
export interface TargetDescriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

export interface NotationDeps {
  /** The time signatures and certificates are checked at. @default the system clock */
  readonly now?: () => Date;
  /** signer:GetRevocationStatus, for `awsSigner`. @default none: an AWS Signer signature is refused */
  readonly revocation?: GetRevocationStatus;
}

interface Descriptor {
  readonly mediaType?: string;
  readonly artifactType?: string;
  readonly digest?: string;
  readonly size?: number;
}

const DIGEST = /^sha256:[a-f0-9]{64}$/;

function parseJson<T>(body: Buffer): T | undefined {
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/**
 * The signature manifests listed for `digest`: the referrers API's, or when the registry has no
 * referrers API, the index the referrers tag schema keeps under `sha256-<hex>` (as oras-go falls
 * back); only those of artifact type application/vnd.cncf.notary.signature.
 */
async function signatureManifests(
  client: RegistryClient,
  repository: string,
  digest: string,
  label: string,
): Promise<Descriptor[]> {
  let index = await client.getReferrers(repository, digest, NOTARY_SIGNATURE_TYPE);
  let where = 'the referrers API';
  if (index === undefined) {
    const tag = digest.replace(':', '-');
    where = `the referrers tag ${tag}`;
    try {
      index = (await client.getManifest(repository, tag)).body;
    } catch (error) {
      if (error instanceof RegistryError && error.status === 404)
        throw artifactError(
          `${label}: is not signed: there is no Notation signature (the registry has no referrers API, and the referrers tag ${tag} does not exist)`,
        );
      throw error;
    }
  }
  const parsed = parseJson<{ manifests?: unknown }>(index);
  if (!parsed || !Array.isArray(parsed.manifests))
    throw artifactError(`${label}: ${where} did not answer an image index`);
  const signatures = (parsed.manifests as Descriptor[]).filter(
    (manifest) => manifest?.artifactType === NOTARY_SIGNATURE_TYPE,
  );
  if (signatures.length === 0)
    throw artifactError(`${label}: is not signed: ${where} lists no Notation signature`);
  return signatures;
}

/** The envelope blob of one signature manifest, checked against its descriptors; or why not. */
async function envelopeOf(
  client: RegistryClient,
  repository: string,
  descriptor: Descriptor,
): Promise<{ blob: Buffer; mediaType: string } | string> {
  if (typeof descriptor.digest !== 'string' || !DIGEST.test(descriptor.digest))
    return 'its manifest descriptor has no sha256 digest';
  const manifest = await client.getManifest(repository, descriptor.digest);
  if (manifest.digest !== descriptor.digest)
    return `the registry served a manifest whose sha256 is ${manifest.digest}`;
  const parsed = parseJson<{ artifactType?: string; config?: Descriptor; layers?: Descriptor[] }>(
    manifest.body,
  );
  const type = parsed?.artifactType ?? parsed?.config?.mediaType;
  if (type !== NOTARY_SIGNATURE_TYPE)
    return `its manifest is not a Notation signature (artifact type ${type ?? 'none'})`;
  const layers = parsed?.layers ?? [];
  if (layers.length !== 1) return `its manifest has ${layers.length} layers, not one envelope`;
  const [layer] = layers as [Descriptor];
  if (typeof layer.digest !== 'string' || !DIGEST.test(layer.digest) || typeof layer.mediaType !== 'string')
    return 'its envelope descriptor has no sha256 digest or media type';
  if (typeof layer.size !== 'number' || layer.size > MAX_ENVELOPE_BYTES)
    return `its envelope is ${String(layer.size)} bytes, more than the limit of ${MAX_ENVELOPE_BYTES}`;
  const blob = await client.getBlob(
    repository,
    layer.digest,
    MAX_ENVELOPE_BYTES,
    'the signature envelope limit',
  );
  if (sha256Digest(blob) !== layer.digest) return `its envelope's sha256 is not ${layer.digest}`;
  return { blob, mediaType: layer.mediaType };
}

/** Why the payload does not name `target`, or undefined (notation-go compares media type, digest and size). */
function targetProblem(payload: Buffer, target: TargetDescriptor): string | undefined {
  const parsed = parseJson<{ targetArtifact?: Descriptor }>(payload);
  const signed = parsed?.targetArtifact;
  if (!signed) return 'its payload has no targetArtifact';
  if (signed.digest !== target.digest) return `it signs ${String(signed.digest)}, not ${target.digest}`;
  if (signed.size !== target.size)
    return `it signs a manifest of ${String(signed.size)} bytes, not ${target.size}`;
  if (signed.mediaType !== target.mediaType)
    return `it signs media type ${String(signed.mediaType)}, not ${target.mediaType}`;
  return undefined;
}

function certificatesOf(pems: readonly string[]): X509Certificate[] {
  return pems.flatMap((pem) => pemBlocks(pem).map((block) => new X509Certificate(block)));
}

/** Whether a certificate of `chain` is one of `trusted` (notation-core-go's VerifyAuthenticity). */
function chainTrusted(chain: readonly ChainCertificate[], trusted: readonly X509Certificate[]): boolean {
  return chain.some((cert) => trusted.some((anchor) => anchor.raw.equals(cert.x509.raw)));
}

/** Critical extended attributes outside `understood`: a verifier must refuse what it does not process. */
function unknownCritical(envelope: NotationEnvelope, understood: readonly string[]): string[] {
  return envelope.critical.filter((name) => name in envelope.extended && !understood.includes(name));
}

type Check = { signer: string } | { problem: string };

/** A signature checked against a trust policy and its stores (the CA form). */
function checkTrustPolicy(
  envelope: NotationEnvelope,
  verification: Extract<NotationVerification, { trustPolicy: unknown }>,
  now: Date,
): Check {
  const { trustPolicy, trustStores } = verification;
  const strict = trustPolicy.signatureVerification.level === 'strict';
  const storeType = envelope.scheme === SCHEME_X509 ? 'ca' : 'signingAuthority';
  const stores = trustPolicy.trustStores.filter((reference) => reference.startsWith(`${storeType}:`));
  if (stores.length === 0)
    return {
      problem: `it is signed with the ${envelope.scheme} scheme, and the trust policy names no ${storeType} trust store`,
    };
  if (!chainTrusted(envelope.chain, certificatesOf(stores.flatMap((store) => trustStores[store] ?? []))))
    return {
      problem: `its certificate chain (${envelope.chain.map((cert) => cert.name).join(' ← ')}) leads to no certificate of the trust stores ${stores.join(', ')}`,
    };
  const plugin = envelope.extended[VERIFICATION_PLUGIN];
  if (plugin !== undefined)
    return {
      problem: `it requires the verification plugin ${JSON.stringify(plugin)}, which sluice does not run (for AWS Signer, use awsSigner)`,
    };
  const unknown = unknownCritical(envelope, []);
  if (unknown.length > 0)
    return { problem: `it has critical attributes sluice does not understand: ${unknown.join(', ')}` };

  const leaf = envelope.chain[0]!;
  if (leaf.subjectProblem) return { problem: `its signing certificate ${leaf.name}: ${leaf.subjectProblem}` };
  const matched = trustPolicy.trustedIdentities.find((identity) =>
    isSubsetDN(parseDistinguishedName(identity.slice(identity.indexOf(':') + 1)), leaf.subject),
  );
  if (!matched)
    return {
      problem: `its signing certificate ${leaf.name} matches none of the trusted identities (${trustPolicy.trustedIdentities.join('; ')})`,
    };

  if (strict && envelope.expiry && now >= envelope.expiry)
    return { problem: `the signature expired at ${envelope.expiry.toISOString()}` };
  if (strict) {
    const validity =
      envelope.scheme === SCHEME_X509
        ? validityProblem(envelope.chain, now, 'now')
        : validityProblem(envelope.chain, envelope.signingTime!, 'its authentic signing time');
    if (validity) return { problem: validity };
    const published = envelope.chain.find((cert) => cert.revocationEndpoints);
    if (published)
      return {
        problem: `certificate ${published.name} publishes revocation (CRL or OCSP), which sluice does not check: at level strict it refuses what it cannot check (level permissive accepts it unchecked)`,
      };
  }
  return { signer: leaf.name };
}

/** A signature checked as AWS Signer's: trusted root, profile, expiry, authentic time, revocation (fail closed). */
async function checkAwsSigner(
  envelope: NotationEnvelope,
  verification: Extract<NotationVerification, { awsSigner: unknown }>,
  now: Date,
  revocation: GetRevocationStatus | undefined,
): Promise<Check> {
  const { profileArns, rootCertificates } = verification.awsSigner;
  if (envelope.scheme !== SCHEME_SIGNING_AUTHORITY)
    return {
      problem: `it is signed with the ${envelope.scheme} scheme, not AWS Signer's ${SCHEME_SIGNING_AUTHORITY}`,
    };
  if (!chainTrusted(envelope.chain, certificatesOf(rootCertificates)))
    return {
      problem: `its certificate chain (${envelope.chain.map((cert) => cert.name).join(' ← ')}) does not lead to the AWS Signer root`,
    };
  const plugin = envelope.extended[VERIFICATION_PLUGIN];
  if (plugin !== undefined && plugin !== AWS_SIGNER_PLUGIN)
    return { problem: `it requires the verification plugin ${JSON.stringify(plugin)}, not AWS Signer's` };
  const unknown = unknownCritical(envelope, [
    VERIFICATION_PLUGIN,
    VERIFICATION_PLUGIN_MIN_VERSION,
    SIGNING_PROFILE_VERSION,
    SIGNING_JOB,
  ]);
  if (unknown.length > 0)
    return { problem: `it has critical attributes sluice does not understand: ${unknown.join(', ')}` };
  const profileVersionArn = envelope.extended[SIGNING_PROFILE_VERSION];
  const jobArn = envelope.extended[SIGNING_JOB];
  if (typeof profileVersionArn !== 'string' || !envelope.critical.includes(SIGNING_PROFILE_VERSION))
    return { problem: `it has no critical ${SIGNING_PROFILE_VERSION}` };
  if (typeof jobArn !== 'string' || !envelope.critical.includes(SIGNING_JOB))
    return { problem: `it has no critical ${SIGNING_JOB}` };
  if (!profileArns.some((trusted) => profileMatches(trusted, profileVersionArn)))
    return {
      problem: `it was signed by signing profile ${profileVersionArn}, which is not among ${profileArns.join(', ')}`,
    };
  if (envelope.expiry && now >= envelope.expiry)
    return { problem: `the signature expired at ${envelope.expiry.toISOString()}` };
  const validity = validityProblem(envelope.chain, envelope.signingTime!, 'its authentic signing time');
  if (validity) return { problem: validity };

  if (!revocation)
    return {
      problem:
        'its revocation status cannot be read: this run has no AWS Signer client; nothing is applied until it can be read',
    };
  let revoked: readonly string[];
  try {
    ({ revokedEntities: revoked } = await revocation({
      signatureTimestamp: envelope.signingTime!,
      platformId: NOTATION_PLATFORM,
      profileVersionArn,
      jobArn,
      certificateHashes: certificateHashes(envelope.chain),
    }));
  } catch (error) {
    return {
      problem: `its revocation status cannot be read (signer:GetRevocationStatus failed: ${(error as Error).message}); sluice fails closed: nothing is applied until AWS Signer answers`,
    };
  }
  if (revoked.length > 0) {
    const arns = revoked.filter((entity) => entity.startsWith('arn'));
    const certs = revoked.length - arns.length;
    return {
      problem: `AWS Signer says it is revoked: ${[...arns, ...(certs > 0 ? [`${certs} certificate(s) of its chain`] : [])].join(', ')}`,
    };
  }
  return { signer: profileVersionArn };
}

/**
 * Checks that the manifest `target` in `repository` carries a Notation signature that
 * `verification` trusts, and says who signed it. Fails naming the artifact and, for each
 * signature tried, what was wrong.
 */
export async function verifyNotationSignature(
  client: RegistryClient,
  repository: string,
  target: TargetDescriptor,
  verification: NotationVerification,
  deps: NotationDeps = {},
): Promise<SignedBy> {
  const label = describeReference(client.host, repository, target.digest);
  const now = (deps.now ?? (() => new Date()))();
  const signatures = await signatureManifests(client, repository, target.digest, label);
  const problems: string[] = [];
  for (const [index, descriptor] of signatures.slice(0, MAX_SIGNATURES).entries()) {
    const what = `signature ${index + 1} (${String(descriptor.digest)})`;
    const envelope = await envelopeOf(client, repository, descriptor);
    if (typeof envelope === 'string') {
      problems.push(`${what}: ${envelope}`);
      continue;
    }
    let read: NotationEnvelope;
    try {
      read = await readEnvelope(envelope.blob, envelope.mediaType);
    } catch (error) {
      problems.push(`${what}: ${(error as Error).message}`);
      continue;
    }
    const checked =
      'awsSigner' in verification
        ? await checkAwsSigner(read, verification, now, deps.revocation)
        : checkTrustPolicy(read, verification, now);
    if ('problem' in checked) {
      problems.push(`${what}: ${checked.problem}`);
      continue;
    }
    const mismatch = targetProblem(read.payload, target);
    if (mismatch) {
      problems.push(`${what}: ${mismatch}`);
      continue;
    }
    return { provider: 'notation', signer: checked.signer };
  }
  const more =
    signatures.length > MAX_SIGNATURES ? ` (${signatures.length - MAX_SIGNATURES} more not tried)` : '';
  throw artifactError(`${label}: no Notation signature verifies (${problems.join('; ')})${more}`);
}
