// Signatures shaped as AWS Signer's Notation plugin makes them (scheme
// notary.x509.signingAuthority, ES384, the signing profile version and job as critical extended
// attributes), made here because AWS Signer itself cannot sign on this machine: a test CA stands
// in for AWS Signer's root, with its certificates' subjects and extensions, and the envelope is
// stored in the registry as notation stores one (an OCI 1.1 signature manifest listed in the
// referrers tag schema's index).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FlattenedSign } from 'jose';
import type { RegistryClient } from '../../functions/core/oci/registry-client.ts';
import { OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from '../../functions/core/oci/source.ts';
import type { TargetDescriptor } from '../../functions/core/oci/notation-verify.ts';
import { RegistryError } from '../../functions/core/oci/errors.ts';
import { issue, type Issued } from './notation.ts';

/** A stand-in for AWS Signer's chain: root, intermediate, regional CA and a signing leaf, EC P-384 as AWS Signer's. */
export function awsSignerStandInChain(): { root: Issued; chain: Issued[]; leaf: Issued } {
  const at = (cn: string) => `/CN=${cn}/OU=Cryptography/O=AWS/ST=WA/C=US`;
  const root = issue({
    subject: at('sluice stand-in for AWS Signer Code Signing Root CA G1'),
    curve: 'secp384r1',
    days: 3650,
  });
  const intermediate = issue({
    subject: at('sluice stand-in for AWS Signer Code Signing Int CA G1'),
    issuer: root,
    ca: true,
    curve: 'secp384r1',
  });
  const regional = issue({
    subject: at('sluice stand-in for AWS Signer us-west-2 Code Signing CA G1'),
    issuer: intermediate,
    ca: true,
    curve: 'secp384r1',
  });
  const leaf = issue({ subject: at('sluice stand-in for AWS Signer'), issuer: regional, curve: 'secp384r1' });
  return { root, chain: [leaf, regional, intermediate, root], leaf };
}

const der = (cert: Issued) => new X509Certificate(cert.pem).raw.toString('base64');

/** A JWS envelope as AWS Signer's plugin makes it, signed with `leaf`'s key over `target`. */
export async function awsSignerEnvelope(
  leaf: Issued,
  chain: readonly Issued[],
  target: TargetDescriptor,
  attributes: { profileVersionArn: string; jobArn: string; signingTime?: Date; expiry?: Date },
): Promise<Buffer> {
  const signingTime = attributes.signingTime ?? new Date();
  const expiry = attributes.expiry ?? new Date(signingTime.getTime() + 365 * 24 * 3600_000);
  const rfc3339 = (date: Date) => date.toISOString().replace(/\.\d+Z$/, 'Z');
  const crit = [
    'io.cncf.notary.signingScheme',
    'io.cncf.notary.authenticSigningTime',
    'io.cncf.notary.expiry',
    'io.cncf.notary.verificationPlugin',
    'com.amazonaws.signer.signingProfileVersion',
    'com.amazonaws.signer.signingJob',
  ];
  const payload = Buffer.from(JSON.stringify({ targetArtifact: target }));
  const jws = await new FlattenedSign(payload)
    .setProtectedHeader({
      alg: 'ES384',
      cty: 'application/vnd.cncf.notary.payload.v1+json',
      crit,
      'io.cncf.notary.signingScheme': 'notary.x509.signingAuthority',
      'io.cncf.notary.authenticSigningTime': rfc3339(signingTime),
      'io.cncf.notary.expiry': rfc3339(expiry),
      'io.cncf.notary.verificationPlugin': 'com.amazonaws.signer.notation.plugin',
      'io.cncf.notary.verificationPluginMinVersion': '1.0.0',
      'com.amazonaws.signer.signingProfileVersion': attributes.profileVersionArn,
      'com.amazonaws.signer.signingJob': attributes.jobArn,
    })
    .setUnprotectedHeader({
      x5c: chain.map(der),
      'io.cncf.notary.signingAgent': 'sluice AWS Signer stand-in',
    })
    .sign(createPrivateKey(readFileSync(leaf.key)), {
      crit: Object.fromEntries(crit.filter((name) => name.includes('.')).map((name) => [name, true])),
    });
  return Buffer.from(JSON.stringify(jws));
}

/**
 * Stores `envelope` as notation stores a signature: the envelope blob, the empty config, an OCI
 * image manifest of artifact type application/vnd.cncf.notary.signature whose subject is
 * `target`, listed in the index tagged `sha256-<hex>` (the referrers tag schema).
 */
export async function pushNotationSignature(
  registry: RegistryClient,
  repository: string,
  target: TargetDescriptor,
  envelope: Buffer,
): Promise<void> {
  const config = Buffer.from('{}');
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      artifactType: 'application/vnd.cncf.notary.signature',
      config: {
        mediaType: 'application/vnd.oci.empty.v1+json',
        digest: await registry.pushBlob(repository, config),
        size: 2,
      },
      layers: [
        {
          mediaType: 'application/jose+json',
          digest: await registry.pushBlob(repository, envelope),
          size: envelope.length,
        },
      ],
      subject: target,
    }),
  );
  const digest = await registry.putManifest(
    repository,
    `stand-in-${Date.now()}`,
    manifest,
    OCI_MANIFEST_MEDIA_TYPE,
  );
  const tag = target.digest.replace(':', '-');
  let manifests: unknown[] = [];
  try {
    manifests = (
      JSON.parse((await registry.getManifest(repository, tag)).body.toString()) as { manifests: unknown[] }
    ).manifests;
  } catch (error) {
    if (!(error instanceof RegistryError && error.status === 404)) throw error;
  }
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX_MEDIA_TYPE,
    manifests: [
      ...manifests,
      {
        mediaType: OCI_MANIFEST_MEDIA_TYPE,
        digest,
        size: manifest.length,
        artifactType: 'application/vnd.cncf.notary.signature',
      },
    ],
  };
  await registry.putManifest(repository, tag, Buffer.from(JSON.stringify(index)), OCI_INDEX_MEDIA_TYPE);
}
