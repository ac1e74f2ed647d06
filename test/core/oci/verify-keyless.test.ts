// Keyless cosign verification (`verify: { provider: cosign, keyless: { issuer, subject } }`) on the
// real registry, against signatures the real cosign v2.4.3 made keyless with a local Fulcio and
// Rekor (@sigstore/mock; test/fixtures/cosign-keyless and its generate.ts), checked by Sigstore's
// own @sigstore/verify against the fixture's trusted root. Each refusal names the artifact, the
// signature and what was found.
import { ECRClient } from '@aws-sdk/client-ecr';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import { ecrCredentials, pullArtifact } from '../../../functions/core/oci/index.ts';
import { PUBLIC_GOOD_TRUSTED_ROOT } from '../../../functions/core/oci/sigstore-trusted-root.ts';
import type { KeylessIdentity } from '../../../functions/core/oci/source.ts';
import { sha256Digest } from '../../../functions/core/oci/digest.ts';
import { getStatus } from '../../../functions/core/store/status.ts';
import { sluice } from '../../support/cli.ts';
import { engineDeps, rawRegistry, registerDelivery, run } from '../../support/deliveries.ts';
import { KEYLESS_SIGNED, pushKeylessFixture } from '../../support/signed-fixture.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const credentials = ecrCredentials(new ECRClient({}), systemClock);
const A = KEYLESS_SIGNED.identities.a;
const B = KEYLESS_SIGNED.identities.b;
const asA: KeylessIdentity = { issuer: A.iss, subject: A.sub };

const pull = (repository: string, keyless: KeylessIdentity, trustedRoot?: string | null) =>
  pullArtifact(
    {
      url: `oci://${bed.registry.host}/${repository}`,
      tag: 'v1',
      provider: 'aws',
      verify: {
        provider: 'cosign',
        keyless,
        ...(trustedRoot !== null && { trustedRoot: trustedRoot ?? KEYLESS_SIGNED.trustedRoot }),
      },
    },
    { credentials },
  );

const label = (repository: string, which: 'a' | 'b' = 'a') =>
  `${bed.registry.host}/${repository}@${KEYLESS_SIGNED.digests[which]}`;

type Layer = { digest: string; size: number; annotations: Record<string, string> };
/** Fixture `which`'s signature manifest with its (only) layer changed by `edit`. */
function signatureWith(which: 'a' | 'b', edit: (layer: Layer) => void): Buffer {
  const manifest = JSON.parse(KEYLESS_SIGNED.signatureManifest(which).toString('utf8')) as {
    layers: Layer[];
  };
  edit(manifest.layers[0]!);
  return Buffer.from(JSON.stringify(manifest));
}
const layerOf = (which: 'a' | 'b') =>
  (JSON.parse(KEYLESS_SIGNED.signatureManifest(which).toString('utf8')) as { layers: Layer[] }).layers[0]!;

/** The fixture's trusted root with `field` taken from another root. */
function rootWith(
  field: 'certificateAuthorities' | 'tlogs' | 'ctlogs',
  from: Record<string, unknown>,
): string {
  return JSON.stringify({ ...JSON.parse(KEYLESS_SIGNED.trustedRoot), [field]: from[field] });
}
const publicGood = PUBLIC_GOOD_TRUSTED_ROOT as Record<string, unknown>;

describe('keyless cosign verification', () => {
  it('accepts the artifact signed by identity A, and says who signed', async () => {
    const repository = uniqueName('keyless/good');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    const artifact = await pull(repository, asA);
    expect(artifact.digest).toBe(KEYLESS_SIGNED.digests.a);
    expect([...artifact.files.keys()]).toEqual(['cm.yaml']);
    expect(artifact.signedBy).toEqual({ provider: 'cosign', signer: `${A.sub} (issuer ${A.iss})` });
  });

  it('accepts it with patterns that match the whole subject and issuer', async () => {
    const repository = uniqueName('keyless/pattern');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    const artifact = await pull(repository, {
      issuerRegExp: 'https://token\\.actions\\.githubusercontent\\.com',
      subjectRegExp: 'https://github\\.com/example/app/\\.github/workflows/[^@]+@refs/heads/main',
    });
    expect(artifact.signedBy?.signer).toBe(`${A.sub} (issuer ${A.iss})`);
  });

  it('refuses a pattern that matches only part of the subject (cosign would match it anywhere)', async () => {
    const repository = uniqueName('keyless/partial');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    await expect(
      pull(repository, { issuer: A.iss, subjectRegExp: 'github\\.com/example/app/' }),
    ).rejects.toThrow(
      `${label(repository)}: no cosign signature verifies (signature 1: signed by ${A.sub} (issuer ${A.iss}), which does not match subjectRegExp "github\\\\.com/example/app/")`,
    );
  });

  it('refuses an artifact signed by another identity, naming the rules and who signed', async () => {
    const repository = uniqueName('keyless/other');
    await pushKeylessFixture(bed, repository, 'v1', 'b');
    await expect(pull(repository, asA)).rejects.toThrow(
      `${label(repository, 'b')}: no cosign signature verifies (signature 1: signed by ${B.sub} (issuer ${B.iss}), which does not match subject "${A.sub}" and issuer "${A.iss}")`,
    );
    await expect(pull(repository, { issuer: B.iss, subject: A.sub })).rejects.toThrow(
      `which does not match subject "${A.sub}")`,
    );
  });

  it("refuses another artifact carrying A's signature (tampered: the payload names A's digest)", async () => {
    const repository = uniqueName('keyless/tampered');
    await pushKeylessFixture(bed, repository, 'v1', 'b', KEYLESS_SIGNED.signatureManifest('a'));
    await expect(pull(repository, asA)).rejects.toThrow(
      `${label(repository, 'b')}: no cosign signature verifies (signature 1: it signs ${KEYLESS_SIGNED.digests.a}, not ${KEYLESS_SIGNED.digests.b})`,
    );
  });

  it("refuses A's signature over a payload rewritten to name another digest", async () => {
    const repository = uniqueName('keyless/payload');
    const original = layerOf('a');
    const registry = rawRegistry(bed);
    // The artifact's blobs first, so that the rewritten payload can name B's digest.
    await pushKeylessFixture(bed, repository, 'v1', 'b');
    const payload = Buffer.from(
      JSON.stringify({
        critical: {
          identity: { 'docker-reference': `${bed.registry.host}/${repository}` },
          image: { 'docker-manifest-digest': KEYLESS_SIGNED.digests.b },
          type: 'cosign container image signature',
        },
        optional: null,
      }),
    );
    const digest = await registry.pushBlob(repository, payload);
    expect(digest).toBe(sha256Digest(payload));
    await pushKeylessFixture(
      bed,
      repository,
      'v1',
      'b',
      signatureWith('a', (layer) => {
        layer.digest = digest;
        layer.size = payload.length;
        expect(layer.annotations['dev.cosignproject.cosign/signature']).toBe(
          original.annotations['dev.cosignproject.cosign/signature'],
        );
      }),
    );
    await expect(pull(repository, asA)).rejects.toThrow(
      `${label(repository, 'b')}: no cosign signature verifies (signature 1: its transparency log entry is not this signature's (digest mismatch))`,
    );
  });

  it('refuses a certificate that does not chain to a Fulcio CA of the trusted root', async () => {
    const repository = uniqueName('keyless/chain');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    const problem = `${label(repository)}: no cosign signature verifies (signature 1: its certificate does not chain to a Fulcio CA of the trusted root valid when Rekor logged it`;
    await expect(pull(repository, asA, rootWith('certificateAuthorities', publicGood))).rejects.toThrow(
      problem,
    );
    // Without a trusted root, the shipped public-good root: the mock's Fulcio is not in it.
    await expect(pull(repository, asA, null)).rejects.toThrow(problem);
  });

  it('refuses a certificate issued after its CA ended in the trusted root (a stale root does not stretch it)', async () => {
    const repository = uniqueName('keyless/expired-ca');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    const root = JSON.parse(KEYLESS_SIGNED.trustedRoot) as {
      certificateAuthorities: { validFor: { start: string; end?: string } }[];
    };
    const start = new Date(root.certificateAuthorities[0]!.validFor.start);
    root.certificateAuthorities[0]!.validFor.end = new Date(start.getTime() + 1000).toISOString();
    await expect(pull(repository, asA, JSON.stringify(root))).rejects.toThrow(
      'signature 1: its certificate does not chain to a Fulcio CA of the trusted root valid when Rekor logged it',
    );
  });

  it('refuses a signature without its transparency log entry', async () => {
    const repository = uniqueName('keyless/no-tlog');
    await pushKeylessFixture(
      bed,
      repository,
      'v1',
      'a',
      signatureWith('a', (layer) => delete layer.annotations['dev.sigstore.cosign/bundle']),
    );
    await expect(pull(repository, asA)).rejects.toThrow(
      `${label(repository)}: no cosign signature verifies (signature 1: no transparency log entry (dev.sigstore.cosign/bundle): a keyless signature counts only once Rekor has logged it)`,
    );
  });

  it("refuses A's signature with B's transparency log entry", async () => {
    const repository = uniqueName('keyless/wrong-tlog');
    const other = layerOf('b').annotations['dev.sigstore.cosign/bundle']!;
    await pushKeylessFixture(
      bed,
      repository,
      'v1',
      'a',
      signatureWith('a', (layer) => (layer.annotations['dev.sigstore.cosign/bundle'] = other)),
    );
    await expect(pull(repository, asA)).rejects.toThrow(
      'signature 1: its transparency log entry names another certificate than the signature layer',
    );
  });

  it('refuses an entry whose integrated time was changed (its signed entry timestamp no longer verifies)', async () => {
    const repository = uniqueName('keyless/set');
    await pushKeylessFixture(
      bed,
      repository,
      'v1',
      'a',
      signatureWith('a', (layer) => {
        const bundle = JSON.parse(layer.annotations['dev.sigstore.cosign/bundle']!) as {
          Payload: { integratedTime: number };
        };
        bundle.Payload.integratedTime -= 1;
        layer.annotations['dev.sigstore.cosign/bundle'] = JSON.stringify(bundle);
      }),
    );
    await expect(pull(repository, asA)).rejects.toThrow(
      "signature 1: its transparency log entry's signed entry timestamp does not verify with a Rekor key of the trusted root",
    );
  });

  it("refuses the entry when the trusted root does not hold that Rekor's key", async () => {
    const repository = uniqueName('keyless/rekor-key');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    await expect(pull(repository, asA, rootWith('tlogs', publicGood))).rejects.toThrow(
      "signature 1: its transparency log entry's signed entry timestamp does not verify with a Rekor key of the trusted root",
    );
  });

  it('refuses a certificate whose SCT is from no CT log of the trusted root', async () => {
    const repository = uniqueName('keyless/sct');
    await pushKeylessFixture(bed, repository, 'v1', 'a');
    await expect(pull(repository, asA, rootWith('ctlogs', publicGood))).rejects.toThrow(
      'signature 1: its certificate has no SCT from a CT log of the trusted root',
    );
  });

  it("refuses a certificate for B over the key of A's signature: Rekor logged A's certificate", async () => {
    const repository = uniqueName('keyless/forged');
    await pushKeylessFixture(
      bed,
      repository,
      'v1',
      'a',
      signatureWith(
        'a',
        (layer) => (layer.annotations['dev.sigstore.cosign/certificate'] = KEYLESS_SIGNED.forgedCertificate),
      ),
    );
    await expect(pull(repository, { issuer: B.iss, subject: B.sub })).rejects.toThrow(
      `${label(repository)}: no cosign signature verifies (signature 1: its transparency log entry names another certificate than the signature layer)`,
    );
  });
});

describe('a delivery verified keyless', () => {
  it('applies the artifact A signed and records, shows and diffs who signed it; B’s artifact is refused and A’s keeps running', async () => {
    const ns = uniqueName('keyless');
    await createNamespace(bed.kubeConfig(), ns);
    const repository = uniqueName('keyless/delivery');
    const name = uniqueName('keyless');
    const deps = engineDeps();
    await pushKeylessFixture(bed, repository, 'v1', 'a');
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
        verify: { provider: 'cosign', keyless: asA, trustedRoot: KEYLESS_SIGNED.trustedRoot },
      },
    });
    const applied = await run(name, deps);
    expect(applied).toMatchObject({ outcome: 'Succeeded', changes: { created: 1 } });
    const signedByA = { provider: 'cosign', signer: `${A.sub} (issuer ${A.iss})` };
    expect((await getStatus(deps.db, name))?.lastAppliedSignedBy).toEqual(signedByA);
    const revision = `v1@${KEYLESS_SIGNED.digests.a}`;
    const status = await sluice('status', name);
    expect(status.stdout).toContain(`${name}: ${revision} signed by ${A.sub} (issuer ${A.iss}) (cosign)\n`);
    expect(JSON.parse((await sluice('status', name, '--json')).stdout)).toMatchObject({
      lastAppliedSignedBy: signedByA,
    });
    const diff = (await sluice('diff', name)).stdout.split('\n');
    expect(diff.slice(0, 2)).toEqual([
      `delivery ${name} → ${revision} (signed by ${A.sub} (issuer ${A.iss}), cosign)`,
      `  running ${revision} (signed by ${A.sub} (issuer ${A.iss}), cosign)`,
    ]);

    // v1 now points at B's artifact, signed by B: refused, A's revision keeps running.
    await pushKeylessFixture(bed, repository, 'v1', 'b');
    const refused = await run(name, deps);
    expect(refused).toMatchObject({ outcome: 'Failed', appliedRevision: applied.appliedRevision });
    expect(refused.message).toContain(
      `signature 1: signed by ${B.sub} (issuer ${B.iss}), which does not match subject "${A.sub}" and issuer "${A.iss}"`,
    );
    expect((await getStatus(deps.db, name))?.lastAppliedSignedBy).toEqual(signedByA);
    const core = bed.kubeConfig().makeApiClient(CoreV1Api);
    expect((await core.readNamespacedConfigMap({ name: 'keyless-a', namespace: ns })).data).toEqual({
      release: '1.0.0',
    });
  });
});
