import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../functions/core/oci/source.ts';
import { signatureTag } from '../../functions/core/oci/verify.ts';
import type { Components } from '../../dev/components.ts';
import { rawRegistry } from './deliveries.ts';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'cosign');

/** The artifact the real cosign signed (test/fixtures/cosign, made by its generate.ts). */
export const SIGNED = {
  digest: (JSON.parse(readFileSync(join(FIXTURE, 'provenance.json'), 'utf8')) as { digest: string }).digest,
  publicKey: readFileSync(join(FIXTURE, 'cosign.pub'), 'utf8'),
  signatureManifest: readFileSync(join(FIXTURE, 'signature.manifest.json')),
};

/** The fixture's blobs and manifest bytes, pushed as they were signed: `artifact` or `signature`. */
async function pushPart(bed: Components, repository: string, part: 'artifact' | 'signature', tag: string) {
  const registry = rawRegistry(bed);
  for (const file of readdirSync(FIXTURE).filter((f) => f.startsWith(`${part}.sha256-`))) {
    await registry.pushBlob(repository, readFileSync(join(FIXTURE, file)));
  }
  return registry.putManifest(
    repository,
    tag,
    readFileSync(join(FIXTURE, `${part}.manifest.json`)),
    OCI_MANIFEST_MEDIA_TYPE,
  );
}

/** Pushes the signed artifact under `tag`, with its cosign signature unless `signed` is false. */
export async function pushSignedFixture(
  bed: Components,
  repository: string,
  tag: string,
  options: { signed?: boolean } = {},
): Promise<string> {
  const digest = await pushPart(bed, repository, 'artifact', tag);
  if (digest !== SIGNED.digest)
    throw new Error(`the fixture artifact pushed as ${digest}, not ${SIGNED.digest}`);
  if (options.signed !== false) await pushPart(bed, repository, 'signature', signatureTag(digest));
  return digest;
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
