// Notation verification (source.verify provider notation, trust policy and trust stores) on the
// real registry, against signatures the real notation CLI makes here (built from its Go module),
// with certificate authorities made by openssl for each test file.
import { ECRClient } from '@aws-sdk/client-ecr';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import { ecrCredentials, pullArtifact, verifyResolved } from '../../../functions/core/oci/index.ts';
import type { NotationVerification } from '../../../functions/core/oci/notation-policy.ts';
import { verifyNotationSignature } from '../../../functions/core/oci/notation-verify.ts';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../../functions/core/oci/source.ts';
import { pushFiles, rawRegistry } from '../../support/deliveries.ts';
import { issue, notationSign } from '../../support/notation.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const credentials = ecrCredentials(new ECRClient({}), systemClock);

const root = issue({ subject: '/C=US/ST=WA/O=sluice test/CN=Release Root' });
const release = issue({ subject: '/C=US/ST=WA/L=Seattle/O=sluice test/CN=release', issuer: root });
const otherRoot = issue({ subject: '/C=US/ST=WA/O=sluice test/CN=Other Root' });
const otherCaRelease = issue({
  subject: '/C=US/ST=WA/L=Seattle/O=sluice test/CN=release',
  issuer: otherRoot,
});
const intern = issue({ subject: '/C=US/ST=WA/O=sluice test/CN=intern', issuer: root });
const shortLived = issue({ subject: '/C=US/ST=WA/O=sluice test/CN=release', issuer: root, days: 1 });
const withCrl = issue({ subject: '/C=US/ST=WA/O=sluice test/CN=release', issuer: root, crl: true });

const RELEASE_IDENTITY = 'x509.subject: C=US, ST=WA, O=sluice test, CN=release';

const policy = (
  level: 'strict' | 'permissive' = 'strict',
  identities = [RELEASE_IDENTITY],
): NotationVerification => ({
  provider: 'notation',
  trustPolicy: {
    signatureVerification: { level },
    trustStores: ['ca:release'],
    trustedIdentities: identities,
  },
  trustStores: { 'ca:release': [root.pem] },
});

const source = (repository: string, verify: NotationVerification, tag = 'v1') => ({
  url: `oci://${bed.registry.host}/${repository}`,
  tag,
  provider: 'aws' as const,
  verify,
});

/** Pushes a one-file artifact and returns its digest. */
const push = (repository: string, tag = 'v1', text = 'kind: ConfigMap\n') =>
  pushFiles(bed, repository, tag, { 'cm.yaml': text });

/** The descriptor of `digest` as notation signed it. */
async function target(repository: string, digest: string) {
  const manifest = await rawRegistry(bed).getManifest(repository, digest);
  return { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.body.length };
}

const verify = async (repository: string, digest: string, verification: NotationVerification, now?: Date) =>
  verifyNotationSignature(rawRegistry(bed), repository, await target(repository, digest), verification, {
    ...(now && { now: () => now }),
  });

describe('Notation verification with a trust policy (signatures by the real notation CLI)', () => {
  it('accepts the artifact signed by a certificate of the trust store with a trusted identity, and names the signer', async () => {
    const repository = uniqueName('notation/ok');
    const digest = await push(repository);
    notationSign(bed, repository, digest, release, [root]);
    const artifact = await pullArtifact(source(repository, policy()), { credentials });
    expect(artifact.digest).toBe(digest);
    expect([...artifact.files.keys()]).toEqual(['cm.yaml']);
    await expect(verify(repository, digest, policy())).resolves.toEqual({
      provider: 'notation',
      signer: 'C=US, ST=WA, L=Seattle, O=sluice test, CN=release',
    });
    // A rollout's check of the digest before its members pull it.
    await verifyResolved(
      source(repository, policy()),
      { digest, revision: `v1@${digest}`, tag: 'v1' },
      { credentials },
    );
  });

  it('refuses a signature by a certificate of another CA, even with the same subject', async () => {
    const repository = uniqueName('notation/otherca');
    const digest = await push(repository);
    notationSign(bed, repository, digest, otherCaRelease, [otherRoot]);
    await expect(pullArtifact(source(repository, policy()), { credentials })).rejects.toThrow(
      /no Notation signature verifies \(signature 1 \(sha256:[a-f0-9]{64}\): its certificate chain \(C=US, ST=WA, L=Seattle, O=sluice test, CN=release ← C=US, ST=WA, O=sluice test, CN=Other Root\) leads to no certificate of the trust stores ca:release\)/,
    );
  });

  it('refuses a signature by another identity of the trusted CA', async () => {
    const repository = uniqueName('notation/identity');
    const digest = await push(repository);
    notationSign(bed, repository, digest, intern, [root]);
    await expect(pullArtifact(source(repository, policy()), { credentials })).rejects.toThrow(
      `its signing certificate C=US, ST=WA, O=sluice test, CN=intern matches none of the trusted identities (${RELEASE_IDENTITY})`,
    );
  });

  it('refuses a genuine signature listed for another artifact (tampered artifact)', async () => {
    const repository = uniqueName('notation/moved');
    const signed = await push(repository, 'v1');
    notationSign(bed, repository, signed, release, [root]);
    const other = await push(repository, 'v2', 'kind: Secret\n');
    // Whoever can push lists the genuine signature in the other artifact's referrers tag.
    const registry = rawRegistry(bed);
    const index = await registry.getManifest(repository, signed.replace(':', '-'));
    await registry.putManifest(repository, other.replace(':', '-'), index.body, index.mediaType);
    await expect(pullArtifact(source(repository, policy(), 'v2'), { credentials })).rejects.toThrow(
      `it signs ${signed}, not ${other}`,
    );
  });

  it('refuses an artifact without a signature, saying where it looked', async () => {
    const repository = uniqueName('notation/none');
    const digest = await push(repository);
    await expect(pullArtifact(source(repository, policy()), { credentials })).rejects.toThrow(
      `is not signed: there is no Notation signature (the registry has no referrers API, and the referrers tag ${digest.replace(':', '-')} does not exist)`,
    );
  });

  it('refuses a certificate that has expired at level strict, and accepts it at level permissive', async () => {
    const repository = uniqueName('notation/expired');
    const digest = await push(repository);
    notationSign(bed, repository, digest, shortLived, [root]);
    const later = new Date(Date.now() + 3 * 24 * 3600_000);
    await expect(verify(repository, digest, policy(), later)).rejects.toThrow(
      /certificate C=US, ST=WA, O=sluice test, CN=release expired at .* \(now is /,
    );
    await expect(verify(repository, digest, policy('permissive'), later)).resolves.toMatchObject({
      signer: 'C=US, ST=WA, O=sluice test, CN=release',
    });
    await expect(verify(repository, digest, policy())).resolves.toMatchObject({ provider: 'notation' });
  });

  it('refuses a signature past its expiry (notation sign --expiry)', async () => {
    const repository = uniqueName('notation/sigexpiry');
    const digest = await push(repository);
    notationSign(bed, repository, digest, release, [root], { expiry: '1h' });
    await expect(verify(repository, digest, policy())).resolves.toMatchObject({ provider: 'notation' });
    await expect(verify(repository, digest, policy(), new Date(Date.now() + 2 * 3600_000))).rejects.toThrow(
      /the signature expired at /,
    );
  });

  it('refuses at level strict a certificate that publishes revocation it cannot check', async () => {
    const repository = uniqueName('notation/crl');
    const digest = await push(repository);
    notationSign(bed, repository, digest, withCrl, [root]);
    await expect(verify(repository, digest, policy())).rejects.toThrow(
      'certificate C=US, ST=WA, O=sluice test, CN=release publishes revocation (CRL or OCSP), which sluice does not check',
    );
    await expect(verify(repository, digest, policy('permissive'))).resolves.toMatchObject({
      provider: 'notation',
    });
  });

  it('refuses a COSE signature, saying to sign with JWS', async () => {
    const repository = uniqueName('notation/cose');
    const digest = await push(repository);
    notationSign(bed, repository, digest, release, [root], { format: 'cose' });
    await expect(verify(repository, digest, policy())).rejects.toThrow(
      'it is a COSE envelope (application/cose), which sluice does not verify',
    );
  });

  it('tries each signature: one good signature among bad ones is enough', async () => {
    const repository = uniqueName('notation/several');
    const digest = await push(repository);
    notationSign(bed, repository, digest, intern, [root]);
    notationSign(bed, repository, digest, release, [root]);
    await expect(verify(repository, digest, policy())).resolves.toEqual({
      provider: 'notation',
      signer: 'C=US, ST=WA, L=Seattle, O=sluice test, CN=release',
    });
  });

  it('refuses a signature whose envelope was altered', async () => {
    const repository = uniqueName('notation/altered');
    const digest = await push(repository);
    notationSign(bed, repository, digest, release, [root]);
    const registry = rawRegistry(bed);
    const index = JSON.parse(
      (await registry.getManifest(repository, digest.replace(':', '-'))).body.toString(),
    ) as {
      manifests: { digest: string }[];
    };
    const signatureManifest = JSON.parse(
      (await registry.getManifest(repository, index.manifests[0]!.digest)).body.toString(),
    ) as { layers: { digest: string; size: number }[] } & Record<string, unknown>;
    const envelope = JSON.parse(
      (await registry.getBlob(repository, signatureManifest.layers[0]!.digest, 1 << 20)).toString(),
    ) as { payload: string };
    // The payload rewritten to name the same artifact with an annotation: the signature no longer covers it.
    const payload = JSON.parse(Buffer.from(envelope.payload, 'base64url').toString()) as {
      targetArtifact: Record<string, unknown>;
    };
    payload.targetArtifact.annotations = { 'io.example/approved': 'yes' };
    envelope.payload = Buffer.from(JSON.stringify(payload)).toString('base64url');
    const altered = Buffer.from(JSON.stringify(envelope));
    const layerDigest = await registry.pushBlob(repository, altered);
    const manifest = Buffer.from(
      JSON.stringify({
        ...signatureManifest,
        layers: [{ ...signatureManifest.layers[0], digest: layerDigest, size: altered.length }],
      }),
    );
    const manifestDigest = await registry.putManifest(
      repository,
      'altered',
      manifest,
      OCI_MANIFEST_MEDIA_TYPE,
    );
    const alteredIndex = {
      ...index,
      manifests: [{ ...index.manifests[0], digest: manifestDigest, size: manifest.length }],
    };
    await registry.putManifest(
      repository,
      digest.replace(':', '-'),
      Buffer.from(JSON.stringify(alteredIndex)),
      'application/vnd.oci.image.index.v1+json',
    );
    await expect(verify(repository, digest, policy())).rejects.toThrow(
      "its signature does not verify with its signing certificate's key",
    );
  });
});
