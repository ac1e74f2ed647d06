import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../functions/core/oci/source.ts';
import { signatureTag } from '../../functions/core/oci/verify.ts';
import type { Components } from '../../dev/components.ts';
import { rawRegistry } from './deliveries.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const FIXTURE = join(FIXTURES, 'cosign');
/** The artifact the real cosign signed with two KMS keys of local-kms (made by its generate.ts). */
const KMS_FIXTURE = join(FIXTURES, 'cosign-kms');

const provenance = (folder: string) =>
  JSON.parse(readFileSync(join(folder, 'provenance.json'), 'utf8')) as { digest: string; signers?: string[] };

/** The artifact the real cosign signed (test/fixtures/cosign, made by its generate.ts). */
export const SIGNED = {
  digest: provenance(FIXTURE).digest,
  publicKey: readFileSync(join(FIXTURE, 'cosign.pub'), 'utf8'),
  signatureManifest: readFileSync(join(FIXTURE, 'signature.manifest.json')),
};

/**
 * The artifact the real cosign signed with `cosign sign --key awskms:///<ARN>`, once with each of
 * `signers` (LOCAL_KMS_KEYS.cosignEcc, then .cosignRsa): test/fixtures/cosign-kms.
 */
export const KMS_SIGNED = {
  digest: provenance(KMS_FIXTURE).digest,
  signers: provenance(KMS_FIXTURE).signers ?? [],
  signatureManifest: readFileSync(join(KMS_FIXTURE, 'signature.manifest.json')),
};

/** A fixture's blobs and manifest bytes, pushed as they were signed: `artifact` or `signature`. */
async function pushPart(
  bed: Components,
  folder: string,
  repository: string,
  part: 'artifact' | 'signature',
  tag: string,
) {
  const registry = rawRegistry(bed);
  for (const file of readdirSync(folder).filter((f) => f.startsWith(`${part}.sha256-`))) {
    await registry.pushBlob(repository, readFileSync(join(folder, file)));
  }
  return registry.putManifest(
    repository,
    tag,
    readFileSync(join(folder, `${part}.manifest.json`)),
    OCI_MANIFEST_MEDIA_TYPE,
  );
}

async function pushFixture(
  bed: Components,
  folder: string,
  repository: string,
  tag: string,
  signed: boolean,
): Promise<string> {
  const expected = provenance(folder).digest;
  const digest = await pushPart(bed, folder, repository, 'artifact', tag);
  if (digest !== expected) throw new Error(`the fixture artifact pushed as ${digest}, not ${expected}`);
  if (signed) await pushPart(bed, folder, repository, 'signature', signatureTag(digest));
  return digest;
}

/** Pushes the signed artifact under `tag`, with its cosign signature unless `signed` is false. */
export function pushSignedFixture(
  bed: Components,
  repository: string,
  tag: string,
  options: { signed?: boolean } = {},
): Promise<string> {
  return pushFixture(bed, FIXTURE, repository, tag, options.signed !== false);
}

/** Pushes the artifact cosign signed with the KMS keys under `tag`, with its signatures. */
export function pushKmsSignedFixture(bed: Components, repository: string, tag: string): Promise<string> {
  return pushFixture(bed, KMS_FIXTURE, repository, tag, true);
}

/** Puts a signature manifest (its payload blob pushed first) under the signature tag of `digest`. */
export async function putSignature(
  bed: Components,
  repository: string,
  digest: string,
  payload: Buffer,
  signature: string,
): Promise<void> {
  const registry = rawRegistry(bed);
  const payloadDigest = await registry.pushBlob(repository, payload);
  const config = Buffer.from('{}');
  const configDigest = await registry.pushBlob(repository, config);
  const manifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    config: {
      mediaType: 'application/vnd.oci.image.config.v1+json',
      size: config.length,
      digest: configDigest,
    },
    layers: [
      {
        mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
        size: payload.length,
        digest: payloadDigest,
        annotations: { 'dev.cosignproject.cosign/signature': signature },
      },
    ],
  };
  await registry.putManifest(
    repository,
    signatureTag(digest),
    Buffer.from(JSON.stringify(manifest)),
    OCI_MANIFEST_MEDIA_TYPE,
  );
}

/** Two artifacts the real cosign signed keyless against @sigstore/mock: test/fixtures/cosign-keyless. */
const KEYLESS_FIXTURE = join(FIXTURES, 'cosign-keyless');
const keylessProvenance = JSON.parse(readFileSync(join(KEYLESS_FIXTURE, 'provenance.json'), 'utf8')) as {
  digests: { a: string; b: string };
  identities: { a: { iss: string; sub: string }; b: { iss: string; sub: string } };
};

/**
 * The keyless fixture: artifact `a` signed by identity `a`, `b` by `b`; the trusted root naming the
 * mock's Fulcio, CT log and Rekor; a certificate for identity b over the key of a's signature.
 */
export const KEYLESS_SIGNED = {
  digests: keylessProvenance.digests,
  identities: keylessProvenance.identities,
  trustedRoot: readFileSync(join(KEYLESS_FIXTURE, 'trusted-root.json'), 'utf8'),
  forgedCertificate: readFileSync(join(KEYLESS_FIXTURE, 'forged-certificate.pem'), 'utf8'),
  signatureManifest: (which: 'a' | 'b') =>
    readFileSync(join(KEYLESS_FIXTURE, `${which}.signature.manifest.json`)),
};

/**
 * Pushes keyless fixture artifact `which` under `tag` with, under its signature tag,
 * `signatureManifest` (the one cosign made by default: its blobs are pushed either way).
 */
export async function pushKeylessFixture(
  bed: Components,
  repository: string,
  tag: string,
  which: 'a' | 'b',
  signatureManifest: Buffer = KEYLESS_SIGNED.signatureManifest(which),
): Promise<string> {
  const registry = rawRegistry(bed);
  for (const file of readdirSync(KEYLESS_FIXTURE).filter((f) =>
    /^[ab]\.(artifact|signature)\.sha256-/.test(f),
  ))
    await registry.pushBlob(repository, readFileSync(join(KEYLESS_FIXTURE, file)));
  const digest = await registry.putManifest(
    repository,
    tag,
    readFileSync(join(KEYLESS_FIXTURE, `${which}.artifact.manifest.json`)),
    OCI_MANIFEST_MEDIA_TYPE,
  );
  if (digest !== KEYLESS_SIGNED.digests[which])
    throw new Error(`the keyless fixture ${which} pushed as ${digest}, not ${KEYLESS_SIGNED.digests[which]}`);
  await registry.putManifest(repository, signatureTag(digest), signatureManifest, OCI_MANIFEST_MEDIA_TYPE);
  return digest;
}
