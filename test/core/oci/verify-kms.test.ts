// cosign verification against an AWS KMS key (`verify: { provider: cosign, kmsKeyArn }`) on the
// real registry and local-kms, against signatures the real cosign made with `--key awskms:///…`
// (test/fixtures/cosign-kms; local-kms is seeded with the very keys that signed). The public key
// comes from kms:GetPublicKey; a key that cannot be read, or is not a signing key, refuses the
// artifact naming the key and the artifact, and a delivery keeps its last applied revision.
import { CoreV1Api } from '@kubernetes/client-node';
import { KMSClient } from '@aws-sdk/client-kms';
import { ECRClient } from '@aws-sdk/client-ecr';
import { describe, expect, it } from 'vitest';
import { LOCAL_KMS_ACCOUNT, LOCAL_KMS_KEYS, LOCAL_KMS_REGION } from '../../../dev/local-kms.ts';
import { freePort } from '../../../dev/processes.ts';
import { kmsGetPublicKey } from '../../../functions/core/aws/kms-public-key.ts';
import { systemClock } from '../../../functions/core/clock.ts';
import { ecrCredentials, pullArtifact } from '../../../functions/core/oci/index.ts';
import { KmsPublicKeys, type GetKmsPublicKey } from '../../../functions/core/oci/kms-public-keys.ts';
import { engineDeps, pushFiles, rawRegistry, registerDelivery, run } from '../../support/deliveries.ts';
import { KMS_SIGNED, pushKmsSignedFixture, putSignature } from '../../support/signed-fixture.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const credentials = ecrCredentials(new ECRClient({}), systemClock);
/** GetPublicKey on local-kms (AWS_ENDPOINT_URL_KMS), counting the requests. */
function countedReads(): { read: GetKmsPublicKey; keys: string[] } {
  const real = kmsGetPublicKey();
  const keys: string[] = [];
  return { keys, read: (arn) => (keys.push(arn), real(arn)) };
}

/** A KMS client whose endpoint nothing listens on: KMS unreachable. */
async function unreachableKms(): Promise<GetKmsPublicKey> {
  const endpoint = `http://127.0.0.1:${await freePort()}`;
  return kmsGetPublicKey((region) => new KMSClient({ region, endpoint, maxAttempts: 1 }));
}

const pull = (repository: string, kmsKeyArn: string, kmsPublicKeys?: KmsPublicKeys) =>
  pullArtifact(
    {
      url: `oci://${bed.registry.host}/${repository}`,
      tag: 'v1',
      provider: 'aws',
      verify: { provider: 'cosign', kmsKeyArn },
    },
    { credentials, kmsPublicKeys: kmsPublicKeys ?? new KmsPublicKeys(kmsGetPublicKey()) },
  );

const label = (repository: string, digest = KMS_SIGNED.digest) =>
  `${bed.registry.host}/${repository}@${digest}`;

describe('cosign verification against a KMS key', () => {
  it('the fixture was signed by cosign with the ECC key, then the RSA key', () => {
    expect(KMS_SIGNED.signers).toEqual([LOCAL_KMS_KEYS.cosignEcc, LOCAL_KMS_KEYS.cosignRsa]);
  });

  it('accepts the artifact cosign signed with the ECC_NIST_P256 key, reading its public key once', async () => {
    const repository = uniqueName('kms/ecc');
    await pushKmsSignedFixture(bed, repository, 'v1');
    const counted = countedReads();
    const keys = new KmsPublicKeys(counted.read);
    const artifact = await pull(repository, LOCAL_KMS_KEYS.cosignEcc, keys);
    expect(artifact.digest).toBe(KMS_SIGNED.digest);
    expect(artifact.signedBy).toEqual({ provider: 'cosign', signer: LOCAL_KMS_KEYS.cosignEcc });
    expect([...artifact.files.keys()]).toEqual(['cm.yaml']);
    await pull(repository, LOCAL_KMS_KEYS.cosignEcc, keys);
    expect(counted.keys).toEqual([LOCAL_KMS_KEYS.cosignEcc]);
  });

  it('accepts it with the RSA_2048 key (cosign signed with its first algorithm, RSASSA_PSS_SHA_256)', async () => {
    const repository = uniqueName('kms/rsa');
    await pushKmsSignedFixture(bed, repository, 'v1');
    const artifact = await pull(repository, LOCAL_KMS_KEYS.cosignRsa);
    expect(artifact.digest).toBe(KMS_SIGNED.digest);
  });

  it('refuses it against another KMS signing key, naming the key for each signature', async () => {
    const repository = uniqueName('kms/other');
    await pushKmsSignedFixture(bed, repository, 'v1');
    const other = LOCAL_KMS_KEYS.otherSigner;
    await expect(pull(repository, other)).rejects.toThrow(
      `${label(repository)}: no cosign signature verifies (signature 1: not made by KMS key ${other}; signature 2: not made by KMS key ${other})`,
    );
  });

  it('refuses a tampered artifact: the genuine signatures copied onto it, or their payload rewritten for it', async () => {
    const repository = uniqueName('kms/tampered');
    await pushKmsSignedFixture(bed, repository, 'v1');
    // Someone with push access replaces v1 with other content and copies the signature manifest.
    const digest = await pushFiles(bed, repository, 'v1', { 'cm.yaml': 'kind: ConfigMap\n' });
    const layers = (
      JSON.parse(KMS_SIGNED.signatureManifest.toString('utf8')) as {
        layers: { digest: string; annotations: Record<string, string> }[];
      }
    ).layers;
    const signature = layers[0]!.annotations['dev.cosignproject.cosign/signature']!;
    const genuinePayload = await rawRegistry(bed).getBlob(repository, layers[0]!.digest, 64 * 1024);
    await putSignature(bed, repository, digest, genuinePayload, signature);
    await expect(pull(repository, LOCAL_KMS_KEYS.cosignEcc)).rejects.toThrow(
      `${label(repository, digest)}: no cosign signature verifies (signature 1: it signs ${KMS_SIGNED.digest}, not ${digest})`,
    );
    const rewritten = Buffer.from(genuinePayload.toString('utf8').replace(KMS_SIGNED.digest, digest));
    await putSignature(bed, repository, digest, rewritten, signature);
    await expect(pull(repository, LOCAL_KMS_KEYS.cosignEcc)).rejects.toThrow(
      `signature 1: not made by KMS key ${LOCAL_KMS_KEYS.cosignEcc}`,
    );
  });

  it('refuses a key that is not for signing (KeyUsage ENCRYPT_DECRYPT), naming the key and the artifact', async () => {
    const repository = uniqueName('kms/encrypt');
    await pushKmsSignedFixture(bed, repository, 'v1');
    await expect(pull(repository, LOCAL_KMS_KEYS.rsaEncryption)).rejects.toThrow(
      `${label(repository)}: cannot verify it against KMS key ${LOCAL_KMS_KEYS.rsaEncryption}: reading its public key failed (KMS key ${LOCAL_KMS_KEYS.rsaEncryption} has KeyUsage ENCRYPT_DECRYPT, not SIGN_VERIFY: it is not a signing key)`,
    );
  });

  it('refuses a symmetric key and a key KMS does not have (no public key to read), naming each', async () => {
    const repository = uniqueName('kms/unreadable');
    await pushKmsSignedFixture(bed, repository, 'v1');
    await expect(pull(repository, LOCAL_KMS_KEYS.fixtures)).rejects.toThrow(
      `${label(repository)}: cannot verify it against KMS key ${LOCAL_KMS_KEYS.fixtures}: reading its public key failed`,
    );
    const missing = `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/11111111-2222-4333-8444-555555555555`;
    await expect(pull(repository, missing)).rejects.toThrow(
      new RegExp(
        `cannot verify it against KMS key ${missing}: reading its public key failed \\(.*does not exist`,
      ),
    );
  });

  it('when KMS cannot be reached the artifact is refused, and a later read that works is not kept from it', async () => {
    const repository = uniqueName('kms/unreachable');
    await pushKmsSignedFixture(bed, repository, 'v1');
    const unreachable = await unreachableKms();
    const reachable = kmsGetPublicKey();
    let up = false;
    const keys = new KmsPublicKeys((arn) => (up ? reachable(arn) : unreachable(arn)));
    await expect(pull(repository, LOCAL_KMS_KEYS.cosignEcc, keys)).rejects.toThrow(
      `${label(repository)}: cannot verify it against KMS key ${LOCAL_KMS_KEYS.cosignEcc}: reading its public key failed`,
    );
    up = true;
    expect((await pull(repository, LOCAL_KMS_KEYS.cosignEcc, keys)).digest).toBe(KMS_SIGNED.digest);
  });

  it('asks KMS in the key’s own Region, one client per Region', async () => {
    const regions: string[] = [];
    const read = kmsGetPublicKey((region) => (regions.push(region), new KMSClient({ region })));
    await read(LOCAL_KMS_KEYS.cosignEcc);
    await read(LOCAL_KMS_KEYS.cosignRsa);
    const elsewhere = `arn:aws:kms:eu-west-1:${LOCAL_KMS_ACCOUNT}:key/0af3f91f-d3f1-4669-a248-c1d4672989b8`;
    // local-kms holds keys of us-east-1 only: asked for the eu-west-1 ARN, it has no such key.
    await expect(read(elsewhere)).rejects.toThrow(/does not exist/);
    expect(regions).toEqual([LOCAL_KMS_REGION, 'eu-west-1']);
  });

  it('a delivery verified against the KMS key applies the signed artifact; when GetPublicKey fails it keeps the last applied revision, naming the key', async () => {
    const ns = uniqueName('kms-signed');
    await createNamespace(bed.kubeConfig(), ns);
    const repository = uniqueName('kms/delivery');
    const name = uniqueName('kms-signed');
    const deps = engineDeps();
    await pushKmsSignedFixture(bed, repository, 'v1');
    await registerDelivery(deps, bed, {
      name,
      repository,
      tag: 'v1',
      prune: true,
      targetNamespace: ns,
      source: {
        url: `oci://${bed.registry.host}/${repository}`,
        tag: 'v1',
        provider: 'aws',
        verify: { provider: 'cosign', kmsKeyArn: LOCAL_KMS_KEYS.cosignEcc },
      },
    });
    const applied = await run(name, deps);
    expect(applied).toMatchObject({ outcome: 'Succeeded', changes: { created: 1 } });
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    const data = async () => (await core.readNamespacedConfigMap({ name: 'kms-signed', namespace: ns })).data;
    expect(await data()).toEqual({ release: '1.0.0' });

    // A new container that cannot read the key (KMS unreachable), and a new revision that drops the ConfigMap.
    const newRevision = await pushFiles(bed, repository, 'v1', {});
    const cut = { ...deps, kmsPublicKeys: new KmsPublicKeys(await unreachableKms()) };
    const refused = await run(name, cut);
    expect(refused).toMatchObject({
      outcome: 'Failed',
      reason: 'ArtifactFailed',
      appliedRevision: applied.appliedRevision,
    });
    expect(applied.appliedRevision).toBe(`v1@${KMS_SIGNED.digest}`);
    expect(refused.message).toContain(
      `${label(repository, newRevision)}: cannot verify it against KMS key ${LOCAL_KMS_KEYS.cosignEcc}: reading its public key failed`,
    );
    expect(await data()).toEqual({ release: '1.0.0' });

    // With the key readable again, the unsigned revision is refused for what it is.
    const unsigned = await run(name, deps);
    expect(unsigned).toMatchObject({ outcome: 'Failed', appliedRevision: applied.appliedRevision });
    expect(unsigned.message).toContain('is not signed: there is no cosign signature');
    expect(await data()).toEqual({ release: '1.0.0' });
  });
});
