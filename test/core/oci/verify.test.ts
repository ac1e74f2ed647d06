// cosign signature verification (Flux's verify, provider cosign) on the real registry, against
// signatures the real cosign made (test/fixtures/cosign): a delivery whose artifact is not signed
// by one of its keys applies nothing, and the status says why.
import { CoreV1Api } from '@kubernetes/client-node';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseDelivery } from '../../../functions/core/config/index.ts';
import { ecrCredentials, pullArtifact } from '../../../functions/core/oci/index.ts';
import { ECRClient } from '@aws-sdk/client-ecr';
import { systemClock } from '../../../functions/core/clock.ts';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { pushSignedFixture, putSignature, SIGNED } from '../../support/signed-fixture.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const credentials = ecrCredentials(new ECRClient({}), systemClock);

const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const otherPublicKey = otherKey.publicKey.export({ type: 'spki', format: 'pem' }).toString();

const pull = (repository: string, publicKeys: string[], tag = 'v1') =>
  pullArtifact(
    {
      url: `oci://${bed.registry.host}/${repository}`,
      tag,
      provider: 'aws',
      verify: { provider: 'cosign', publicKeys },
    },
    { credentials },
  );

/** cosign's payload for `digest`, as cosign writes it. */
const payloadFor = (digest: string) =>
  Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': `${bed.registry.host}/anything` },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );

describe('cosign verification', () => {
  it('accepts the artifact cosign signed, with its key among others', async () => {
    const repository = uniqueName('signed/ok');
    await pushSignedFixture(bed, repository, 'v1');
    const artifact = await pull(repository, [otherPublicKey, SIGNED.publicKey]);
    expect(artifact.digest).toBe(SIGNED.digest);
    expect([...artifact.files.keys()]).toEqual(['cm.yaml']);
    // Who signed: the SHA-256 of the signing key's DER SubjectPublicKeyInfo (the PEM's body).
    const der = Buffer.from(SIGNED.publicKey.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
    expect(artifact.signedBy).toEqual({
      provider: 'cosign',
      signer: `sha256:${createHash('sha256').update(der).digest('hex')}`,
    });
  });

  it('refuses it with a key that did not sign it', async () => {
    const repository = uniqueName('signed/otherkey');
    await pushSignedFixture(bed, repository, 'v1');
    await expect(pull(repository, [otherPublicKey])).rejects.toThrow(
      `${bed.registry.host}/${repository}@${SIGNED.digest}: no cosign signature verifies (signature 1: made by none of the 1 public key(s))`,
    );
  });

  it('refuses an artifact without a signature, naming the tag it looked for', async () => {
    const repository = uniqueName('signed/none');
    await pushSignedFixture(bed, repository, 'v1', { signed: false });
    await expect(pull(repository, [SIGNED.publicKey])).rejects.toThrow(
      `is not signed: there is no cosign signature (tag ${SIGNED.digest.replace(':', '-')}.sig not found)`,
    );
  });

  it('refuses a genuine signature copied onto another artifact', async () => {
    const repository = uniqueName('signed/moved');
    const digest = await pushFiles(bed, repository, 'v1', { 'cm.yaml': 'kind: ConfigMap\n' });
    const [layer] = (
      JSON.parse(SIGNED.signatureManifest.toString('utf8')) as {
        layers: { annotations: Record<string, string> }[];
      }
    ).layers;
    const genuinePayload = payloadFor(SIGNED.digest);
    // The signature is cosign's over its own payload bytes; a payload rewritten for the new
    // digest no longer matches it, and the original payload names the original digest.
    await putSignature(
      bed,
      repository,
      digest,
      payloadFor(digest),
      layer!.annotations['dev.cosignproject.cosign/signature']!,
    );
    await expect(pull(repository, [SIGNED.publicKey])).rejects.toThrow(
      'signature 1: made by none of the 1 public key(s)',
    );
    const signedByOther = sign('sha256', genuinePayload, otherKey.privateKey).toString('base64');
    await putSignature(bed, repository, digest, genuinePayload, signedByOther);
    await expect(pull(repository, [otherPublicKey])).rejects.toThrow(
      `signature 1: it signs ${SIGNED.digest}, not ${digest}`,
    );
  });

  it('a delivery with verify applies the signed artifact and nothing of an unsigned one', async () => {
    const ns = uniqueName('signed');
    await createNamespace(bed.kubeConfig(), ns);
    const repository = uniqueName('signed/delivery');
    const name = uniqueName('signed');
    await pushSignedFixture(bed, repository, 'v1');
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
        verify: { provider: 'cosign', publicKeys: [SIGNED.publicKey] },
      },
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 1 } });
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    expect((await core.readNamespacedConfigMap({ name: 'signed', namespace: ns })).data).toEqual({
      release: '1.0.0',
    });

    // Someone with push access replaces v1 with an unsigned artifact that drops the ConfigMap.
    await pushFiles(bed, repository, 'v1', {});
    const refused = await run(name, deps);
    expect(refused).toMatchObject({ outcome: 'Failed', reason: 'ArtifactFailed' });
    expect(refused.message).toContain('is not signed: there is no cosign signature');
    expect((await core.readNamespacedConfigMap({ name: 'signed', namespace: ns })).data).toEqual({
      release: '1.0.0',
    });
  });

  it('refuses a public key that is not one, naming the field', () => {
    let error: unknown;
    try {
      parseDelivery({
        name: 'x',
        source: {
          url: 'oci://registry.example.com/a',
          verify: { provider: 'cosign', publicKeys: ['not a key'] },
        },
        cluster: { kubeconfig: './k' },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      { path: 'source.verify.publicKeys[0]', message: expect.stringContaining('is not a PEM public key') },
    ]);
  });
});
