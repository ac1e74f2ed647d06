// Notation verification of AWS Signer signatures (source.verify provider notation, awsSigner):
// the signing profile, the chain to the root, and revocation read with signer:GetRevocationStatus
// from the AWS Signer stand-in (dev/signer-endpoint.ts, which verifies SigV4), failing closed.
// AWS Signer cannot sign here: a test CA stands in for its root, and the envelopes are made as its
// Notation plugin makes them (test/support/aws-signer-signature.ts).
import { SignerClient } from '@aws-sdk/client-signer';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signerGetRevocationStatus } from '../../../functions/core/aws/signer-revocation.ts';
import type { NotationVerification } from '../../../functions/core/oci/notation-policy.ts';
import { verifyNotationSignature, type NotationDeps } from '../../../functions/core/oci/notation-verify.ts';
import { createSignerEndpoint } from '../../../dev/signer-endpoint.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../../dev/sigv4-identity.ts';
import { pushFiles, rawRegistry } from '../../support/deliveries.ts';
import {
  awsSignerEnvelope,
  awsSignerStandInChain,
  pushNotationSignature,
} from '../../support/aws-signer-signature.ts';
import { issue, notationSign } from '../../support/notation.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const PROFILE = 'arn:aws:signer:us-west-2:123456789012:/signing-profiles/release';
const VERSION = `${PROFILE}/a1B2c3D4e5`;
/** A signing job of its own for each signature: the stand-in's revocations outlive a test. */
const newJob = () => `arn:aws:signer:us-west-2:123456789012:/signing-jobs/${randomUUID()}`;
const OTHER_PROFILE_VERSION = 'arn:aws:signer:us-west-2:123456789012:/signing-profiles/nightly/f6G7h8I9j0';

const { root, chain, leaf } = awsSignerStandInChain();
const verification: NotationVerification = {
  provider: 'notation',
  awsSigner: { profileArns: [PROFILE], rootCertificates: [root.pem] },
};

const signer = createSignerEndpoint({ identities: [TEST_IDENTITIES.stackDeployer] });
let endpoint = '';
beforeAll(async () => {
  await new Promise<void>((ready) => signer.server.listen(0, '127.0.0.1', ready));
  endpoint = `http://127.0.0.1:${(signer.server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((done) => signer.server.close(() => done())));

const revocationAs = (identity: TestIdentity, at = () => endpoint) =>
  signerGetRevocationStatus(
    // The SDK prefixes GetRevocationStatus's host with "data-" (data-signer.<region>.amazonaws.com);
    // a local endpoint has no such name.
    (region) =>
      new SignerClient({
        region,
        endpoint: at(),
        credentials: identity,
        maxAttempts: 1,
        disableHostPrefix: true,
      }),
  );

async function signed(
  repository: string,
  attributes: Partial<Parameters<typeof awsSignerEnvelope>[3]> = {},
  jobArn = newJob(),
) {
  const digest = await pushFiles(bed, repository, 'v1', { 'cm.yaml': 'kind: ConfigMap\n' });
  const manifest = await rawRegistry(bed).getManifest(repository, digest);
  const target = { mediaType: manifest.mediaType, digest, size: manifest.body.length };
  const envelope = await awsSignerEnvelope(leaf, chain, target, {
    profileVersionArn: VERSION,
    jobArn,
    ...attributes,
  });
  await pushNotationSignature(rawRegistry(bed), repository, target, envelope);
  return target;
}

const verify = (
  repository: string,
  target: Parameters<typeof verifyNotationSignature>[2],
  deps: NotationDeps,
) => verifyNotationSignature(rawRegistry(bed), repository, target, verification, deps);

describe('AWS Signer signatures (awsSigner)', () => {
  it('accepts a signature by a trusted profile that AWS Signer says is not revoked, and names the profile version', async () => {
    const repository = uniqueName('awssigner/ok');
    const job = newJob();
    const target = await signed(repository, {}, job);
    const before = signer.queries.length;
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.stackDeployer) }),
    ).resolves.toEqual({
      provider: 'notation',
      signer: VERSION,
    });
    const [query] = signer.queries.slice(before);
    expect(query?.get('profileVersionArn')).toBe(VERSION);
    expect(query?.get('jobArn')).toBe(job);
    expect(query?.get('platformId')).toBe('Notation-OCI-SHA384-ECDSA');
    // One hash per certificate: its TBSCertificate's SHA-384 and its issuer's, 2 × 96 hex digits.
    expect(query?.getAll('certificateHashes').map((hash) => hash.length)).toEqual([192, 192, 192, 192]);
  });

  it('refuses a signature by a profile it does not trust', async () => {
    const repository = uniqueName('awssigner/profile');
    const target = await signed(repository, { profileVersionArn: OTHER_PROFILE_VERSION });
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.stackDeployer) }),
    ).rejects.toThrow(
      `it was signed by signing profile ${OTHER_PROFILE_VERSION}, which is not among ${PROFILE}`,
    );
  });

  it('refuses a signature of a revoked profile, and of a revoked signing job, naming what was revoked', async () => {
    const repository = uniqueName('awssigner/revoked');
    const job = newJob();
    const target = await signed(repository, {}, job);
    const revocation = revocationAs(TEST_IDENTITIES.stackDeployer);
    await expect(verify(repository, target, { revocation })).resolves.toMatchObject({ signer: VERSION });
    signer.revoke(job);
    await expect(verify(repository, target, { revocation })).rejects.toThrow(
      `AWS Signer says it is revoked: ${job})`,
    );
    const other = uniqueName('awssigner/revokedprofile');
    const nightly = 'arn:aws:signer:us-west-2:123456789012:/signing-profiles/revokedone';
    const otherTarget = await signed(other, { profileVersionArn: `${nightly}/k1L2m3N4o5` });
    signer.revoke(nightly);
    await expect(
      verifyNotationSignature(
        rawRegistry(bed),
        other,
        otherTarget,
        {
          provider: 'notation',
          awsSigner: { profileArns: [nightly], rootCertificates: [root.pem] },
        },
        { revocation },
      ),
    ).rejects.toThrow(`AWS Signer says it is revoked: ${nightly})`);
  });

  it('fails closed when the revocation status cannot be read: the stand-in down, a signature it refuses, no client', async () => {
    const repository = uniqueName('awssigner/closed');
    const target = await signed(repository);
    await expect(
      verify(repository, target, {
        revocation: revocationAs(TEST_IDENTITIES.stackDeployer, () => 'http://127.0.0.1:9'),
      }),
    ).rejects.toThrow(
      /its revocation status cannot be read \(signer:GetRevocationStatus failed: .*ECONNREFUSED.*\); sluice fails closed/,
    );
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.outsider) }),
    ).rejects.toThrow(
      /its revocation status cannot be read \(signer:GetRevocationStatus failed: The security token included in the request is invalid\.\); sluice fails closed/,
    );
    await expect(verify(repository, target, {})).rejects.toThrow(
      'its revocation status cannot be read: this run has no AWS Signer client',
    );
  });

  it('refuses a signature whose chain leads to another root, and one not made with the signing-authority scheme', async () => {
    const repository = uniqueName('awssigner/otherroot');
    const impostor = awsSignerStandInChain();
    const digest = await pushFiles(bed, repository, 'v1', { 'cm.yaml': 'kind: ConfigMap\n' });
    const manifest = await rawRegistry(bed).getManifest(repository, digest);
    const target = { mediaType: manifest.mediaType, digest, size: manifest.body.length };
    await pushNotationSignature(
      rawRegistry(bed),
      repository,
      target,
      await awsSignerEnvelope(impostor.leaf, impostor.chain, target, {
        profileVersionArn: VERSION,
        jobArn: newJob(),
      }),
    );
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.stackDeployer) }),
    ).rejects.toThrow('does not lead to the AWS Signer root');
    const caRoot = issue({ subject: '/C=US/ST=WA/O=sluice test/CN=CA Root' });
    notationSign(
      bed,
      repository,
      digest,
      issue({ subject: '/C=US/ST=WA/O=sluice test/CN=release', issuer: caRoot }),
      [caRoot],
    );
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.stackDeployer) }),
    ).rejects.toThrow('signature 2 (sha256:');
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.stackDeployer) }),
    ).rejects.toThrow(
      "it is signed with the notary.x509 scheme, not AWS Signer's notary.x509.signingAuthority",
    );
  });

  it('refuses a signature made when its certificates were not valid (the authentic signing time)', async () => {
    const repository = uniqueName('awssigner/time');
    const target = await signed(repository, { signingTime: new Date(Date.now() - 30 * 24 * 3600_000) });
    await expect(
      verify(repository, target, { revocation: revocationAs(TEST_IDENTITIES.stackDeployer) }),
    ).rejects.toThrow(/is not valid until .* \(its authentic signing time is /);
  });

  it('refuses a genuine signature listed for another artifact', async () => {
    const repository = uniqueName('awssigner/moved');
    const target = await signed(repository);
    const other = await pushFiles(bed, repository, 'v2', { 'cm.yaml': 'kind: Secret\n' });
    const registry = rawRegistry(bed);
    const index = await registry.getManifest(repository, target.digest.replace(':', '-'));
    await registry.putManifest(repository, other.replace(':', '-'), index.body, index.mediaType);
    const otherManifest = await registry.getManifest(repository, other);
    await expect(
      verify(
        repository,
        { mediaType: otherManifest.mediaType, digest: other, size: otherManifest.body.length },
        {
          revocation: revocationAs(TEST_IDENTITIES.stackDeployer),
        },
      ),
    ).rejects.toThrow(`it signs ${target.digest}, not ${other}`);
  });
});
