// AWS Signer signatures, as AWS Signer's Notation plugin (github.com/aws/aws-signer-notation-plugin,
// internal/verifier) verifies them: the signing profile version in the signature's critical
// attributes is one trusted, and signer:GetRevocationStatus says nothing of it is revoked.
import { createHash } from 'node:crypto';
import type { ChainCertificate } from './notation-chain.ts';

export const AWS_SIGNER_PLUGIN = 'com.amazonaws.signer.notation.plugin';
export const SIGNING_PROFILE_VERSION = 'com.amazonaws.signer.signingProfileVersion';
export const SIGNING_JOB = 'com.amazonaws.signer.signingJob';
/** The platform of AWS Signer's Notation signing profiles, as the plugin asks with it. */
export const NOTATION_PLATFORM = 'Notation-OCI-SHA384-ECDSA';

/** What signer:GetRevocationStatus is asked. */
export interface RevocationQuery {
  readonly signatureTimestamp: Date;
  readonly platformId: string;
  readonly profileVersionArn: string;
  readonly jobArn: string;
  readonly certificateHashes: readonly string[];
}

/** signer:GetRevocationStatus (in the profile's Region): the revoked entities, none when nothing is revoked. */
export type GetRevocationStatus = (
  query: RevocationQuery,
) => Promise<{ readonly revokedEntities: readonly string[] }>;

/**
 * The certificate hashes GetRevocationStatus takes, as the plugin computes them: for each
 * certificate, the hex SHA-384 of its TBSCertificate followed by that of its issuer's (the next
 * in the chain), the root's followed by its own.
 */
export function certificateHashes(chain: readonly ChainCertificate[]): string[] {
  const hashes = chain.map((cert) => {
    return createHash('sha384').update(tbsCertificate(cert.x509.raw)).digest('hex');
  });
  return hashes.map((hash, index) => hash + (hashes[index + 1] ?? hash));
}

/** The DER length at `offset` (after the tag): its value and where the content starts. */
function derLength(der: Buffer, offset: number): { length: number; start: number } {
  const first = der[offset]!;
  if (first < 0x80) return { length: first, start: offset + 1 };
  const count = first & 0x7f;
  if (count === 0 || count > 4) throw new Error('the certificate has an unsupported DER length');
  let length = 0;
  for (let i = 1; i <= count; i++) length = length * 256 + der[offset + i]!;
  return { length, start: offset + 1 + count };
}

/** The exact bytes of a DER certificate's TBSCertificate (its first element), as Go's RawTBSCertificate. */
export function tbsCertificate(der: Buffer): Buffer {
  if (der[0] !== 0x30) throw new Error('the certificate is not a DER SEQUENCE');
  const outer = derLength(der, 1);
  if (der[outer.start] !== 0x30) throw new Error("the certificate's TBSCertificate is not a SEQUENCE");
  const tbs = derLength(der, outer.start + 1);
  return der.subarray(outer.start, tbs.start + tbs.length);
}
