// Push and pull against the real local registry (CNCF distribution, htpasswd `AWS:<token>`), with
// credentials from the local ECR API's GetAuthorizationToken, as in AWS.
import { ECRClient } from '@aws-sdk/client-ecr';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../functions/core/clock.ts';
import { SluiceError } from '../../../functions/core/errors.ts';
import {
  anonymousCredentials,
  credentialsFor,
  ecrCredentials,
  FLUX_CONFIG_MEDIA_TYPE,
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  packDirectory,
  pullArtifact,
  pushArtifact,
  RegistryClient,
  resolveArtifact,
  sha256Digest,
  type OciSource,
  type RegistryCredentials,
} from '../../../functions/core/oci/index.ts';
import { fileTree } from '../../support/file-tree.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();

const FILES = {
  'kustomization.yaml': 'resources:\n  - deployment.yaml\n',
  'deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n',
  'overlays/prod/patch.yaml': 'replicas: 3\n',
};

const directory = (files: Record<string, string> = FILES) => fileTree(files, 'sluice-artifact-');

const asText = (files: Map<string, Buffer>) =>
  Object.fromEntries([...files].map(([path, body]) => [path, body.toString('utf8')]));

async function failure(promise: Promise<unknown>): Promise<SluiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  expect((error as SluiceError).reason).toBe('ArtifactFailed');
  return error as SluiceError;
}

let credentials: RegistryCredentials;
const url = (repository: string) => `oci://${bed.registry.host}/${repository}`;
const source = (repository: string, ref: Partial<OciSource> = {}): OciSource => ({
  url: url(repository),
  provider: 'aws',
  ...ref,
});

beforeAll(() => {
  const providers = { aws: ecrCredentials(new ECRClient({}), systemClock), generic: anonymousCredentials };
  credentials = credentialsFor(source('any'), providers);
});

describe('push and pull', () => {
  it('round-trips a directory; the revision is the tag at the manifest digest', async () => {
    const repository = uniqueName('oci/app');
    const pushed = await pushArtifact(directory(), `${url(repository)}:v1`, {
      credentials,
      annotations: { source: 'https://github.com/example/app', revision: 'main@sha1:4f2c1a' },
    });
    expect(pushed.revision).toBe(`v1@${pushed.digest}`);
    expect(pushed.url).toBe(`${url(repository)}:v1`);

    const artifact = await pullArtifact(source(repository, { tag: 'v1' }), { credentials });
    expect(asText(artifact.files)).toEqual(FILES);
    expect(artifact).toMatchObject({ revision: `v1@${pushed.digest}`, digest: pushed.digest, tag: 'v1' });
    expect(artifact.url).toBe(url(repository));
    expect(artifact.annotations).toMatchObject({
      'org.opencontainers.image.source': 'https://github.com/example/app',
      'org.opencontainers.image.revision': 'main@sha1:4f2c1a',
    });
    expect(artifact.annotations['org.opencontainers.image.created']).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );

    // What is stored is what `flux push artifact` writes, and its sha256 is the revision's digest.
    const client = new RegistryClient({ host: bed.registry.host, credentials });
    const manifest = await client.getManifest(repository, 'v1');
    expect(sha256Digest(manifest.body)).toBe(pushed.digest);
    const parsed = JSON.parse(manifest.body.toString()) as {
      mediaType: string;
      config: { mediaType: string; digest: string; size: number };
      layers: { mediaType: string }[];
    };
    expect(parsed.mediaType).toBe(OCI_MANIFEST_MEDIA_TYPE);
    expect(parsed.config).toEqual({ mediaType: FLUX_CONFIG_MEDIA_TYPE, digest: sha256Digest('{}'), size: 2 });
    expect(parsed.layers.map((l) => l.mediaType)).toEqual([FLUX_CONTENT_MEDIA_TYPE]);

    expect(await resolveArtifact(source(repository, { tag: 'v1' }), { credentials })).toEqual({
      digest: pushed.digest,
      tag: 'v1',
      revision: pushed.revision,
      url: url(repository),
    });
  });

  it('pulls tag latest when the source names no ref', async () => {
    const repository = uniqueName('oci/app');
    const pushed = await pushArtifact(directory(), url(repository), { credentials });
    expect(pushed.revision).toBe(`latest@${pushed.digest}`);
    expect((await pullArtifact(source(repository), { credentials })).revision).toBe(pushed.revision);
  });

  it('resolves a semver range to the highest matching tag', async () => {
    const repository = uniqueName('oci/app');
    const dir = directory();
    const digests: Record<string, string> = {};
    for (const tag of ['v1.0.0', 'v1.2.0', '1.10.1', 'v2.0.0', 'v2.1.0-rc.1', 'latest']) {
      digests[tag] = (
        await pushArtifact(dir, `${url(repository)}:${tag}`, {
          credentials,
          annotations: { revision: tag },
        })
      ).digest;
    }
    const picked = async (semver: string) =>
      (await resolveArtifact(source(repository, { semver }), { credentials })).revision;
    expect(await picked('>=1.0.0 <2.0.0')).toBe(`1.10.1@${digests['1.10.1']}`);
    expect(await picked('~1.2')).toBe(`v1.2.0@${digests['v1.2.0']}`);
    expect(await picked('^2')).toBe(`v2.0.0@${digests['v2.0.0']}`);
    expect(await picked('>=2.1.0-0')).toBe(`v2.1.0-rc.1@${digests['v2.1.0-rc.1']}`);

    const artifact = await pullArtifact(source(repository, { semver: '1.x' }), { credentials });
    expect(artifact.tag).toBe('1.10.1');
    expect(artifact.annotations['org.opencontainers.image.revision']).toBe('1.10.1');

    const error = await failure(resolveArtifact(source(repository, { semver: '>=3' }), { credentials }));
    expect(error.message).toContain(`${bed.registry.host}/${repository}`);
    expect(error.message).toContain('no tag matches semver range ">=3"');
  });

  it('pulls by digest; the revision is the bare digest', async () => {
    const repository = uniqueName('oci/app');
    const pushed = await pushArtifact(directory(), `${url(repository)}:v1`, { credentials });
    const artifact = await pullArtifact(source(repository, { digest: pushed.digest }), { credentials });
    expect(artifact.revision).toBe(pushed.digest);
    expect(artifact.tag).toBeUndefined();
    expect(asText(artifact.files)).toEqual(FILES);

    const unknown = `sha256:${'0'.repeat(64)}`;
    const error = await failure(pullArtifact(source(repository, { digest: unknown }), { credentials }));
    expect(error.message).toContain(`${bed.registry.host}/${repository}@${unknown}`);
    expect(error.message).toContain('manifest digest not found (HTTP 404');
  });
});

describe('failures name the thing and the problem', () => {
  it('a missing tag', async () => {
    const repository = uniqueName('oci/app');
    await pushArtifact(directory(), `${url(repository)}:v1`, { credentials });
    const error = await failure(pullArtifact(source(repository, { tag: 'v9' }), { credentials }));
    expect(error.message).toContain(`${bed.registry.host}/${repository}:v9`);
    expect(error.message).toContain('tag "v9" not found (HTTP 404');
  });

  it('a missing repository', async () => {
    const repository = uniqueName('oci/missing');
    const byTag = await failure(pullArtifact(source(repository, { tag: 'v1' }), { credentials }));
    expect(byTag.message).toContain(`${bed.registry.host}/${repository}: repository not found (HTTP 404`);
    const bySemver = await failure(pullArtifact(source(repository, { semver: '^1' }), { credentials }));
    expect(bySemver.message).toContain(`${bed.registry.host}/${repository}: repository not found (HTTP 404`);
  });

  it('refused credentials (HTTP 401)', async () => {
    const repository = uniqueName('oci/app');
    await pushArtifact(directory(), `${url(repository)}:v1`, { credentials });
    const wrong: RegistryCredentials = async () => ({ username: 'AWS', password: 'not-the-token' });
    const error = await failure(pullArtifact(source(repository, { tag: 'v1' }), { credentials: wrong }));
    expect(error.message).toContain(
      `${bed.registry.host}/${repository}:v1: credentials were refused (HTTP 401`,
    );
    const anonymous = await failure(pullArtifact(source(repository), { credentials: anonymousCredentials }));
    expect(anonymous.message).toContain(`none were found for ${bed.registry.host}`);
    const push = await failure(pushArtifact(directory(), `${url(repository)}:v2`, { credentials: wrong }));
    expect(push.message).toContain('credentials were refused (HTTP 401');
  });

  it('no layer of the wanted media type, listing those found; layerMediaType picks another', async () => {
    const repository = uniqueName('oci/app');
    const client = new RegistryClient({ host: bed.registry.host, credentials });
    const layer = await packDirectory(directory());
    const config = Buffer.from('{}');
    const manifest = {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: await client.pushBlob(repository, config),
        size: 2,
      },
      layers: [
        {
          mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
          digest: await client.pushBlob(repository, layer),
          size: layer.length,
        },
      ],
    };
    await client.putManifest(
      repository,
      'v1',
      Buffer.from(JSON.stringify(manifest)),
      OCI_MANIFEST_MEDIA_TYPE,
    );

    const error = await failure(pullArtifact(source(repository, { tag: 'v1' }), { credentials }));
    expect(error.message).toContain(`${bed.registry.host}/${repository}@sha256:`);
    expect(error.message).toContain(`no layer has media type ${FLUX_CONTENT_MEDIA_TYPE}`);
    expect(error.message).toContain('application/vnd.oci.image.layer.v1.tar+gzip');

    const other = await pullArtifact(
      source(repository, { tag: 'v1', layerMediaType: 'application/vnd.oci.image.layer.v1.tar+gzip' }),
      { credentials },
    );
    expect(asText(other.files)).toEqual(FILES);
  });

  it('a layer whose size differs from its descriptor', async () => {
    const repository = uniqueName('oci/app');
    const client = new RegistryClient({ host: bed.registry.host, credentials });
    const layer = await packDirectory(directory());
    const layerDigest = await client.pushBlob(repository, layer);
    const configDigest = await client.pushBlob(repository, Buffer.from('{}'));
    for (const [tag, size] of [
      ['smaller', layer.length - 10],
      ['bigger', layer.length + 10],
    ] as const) {
      const manifest = {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST_MEDIA_TYPE,
        config: { mediaType: FLUX_CONFIG_MEDIA_TYPE, digest: configDigest, size: 2 },
        layers: [{ mediaType: FLUX_CONTENT_MEDIA_TYPE, digest: layerDigest, size }],
      };
      await client.putManifest(
        repository,
        tag,
        Buffer.from(JSON.stringify(manifest)),
        OCI_MANIFEST_MEDIA_TYPE,
      );
    }
    const smaller = await failure(pullArtifact(source(repository, { tag: 'smaller' }), { credentials }));
    expect(smaller.message).toContain(`${bed.registry.host}/${repository}@${layerDigest}`);
    expect(smaller.message).toContain(`more than ${layer.length - 10} bytes (the layer descriptor's size)`);
    const bigger = await failure(pullArtifact(source(repository, { tag: 'bigger' }), { credentials }));
    expect(bigger.message).toContain(
      `the registry served ${layer.length} bytes, the descriptor says ${layer.length + 10}`,
    );
  });

  it('a manifest or layer whose sha256 is not the one asked for', async () => {
    const repository = uniqueName('oci/app');
    const pushed = await pushArtifact(directory(), `${url(repository)}:v1`, { credentials });
    // A registry (or something in between) that serves other bytes than it was asked for.
    const tampering =
      (what: 'manifests' | 'blobs'): typeof fetch =>
      async (input, init) => {
        const response = await fetch(input, init);
        const target = String(input instanceof Request ? input.url : input);
        if (init?.method !== 'GET' || !target.includes(`/${what}/sha256:`) || !response.ok) return response;
        const body = Buffer.from(await response.arrayBuffer());
        // Other bytes: a space in the manifest's JSON, a flipped bit in the layer.
        const tampered =
          what === 'manifests'
            ? Buffer.from(body.toString().replace(/^\{/, '{ '))
            : Buffer.from(body.map((byte, i) => (i === 10 ? byte ^ 1 : byte)));
        return new Response(tampered, {
          status: response.status,
          headers: { 'content-type': response.headers.get('content-type') ?? '' },
        });
      };
    const manifest = await failure(
      pullArtifact(source(repository, { tag: 'v1' }), { credentials, fetch: tampering('manifests') }),
    );
    expect(manifest.message).toContain(`${bed.registry.host}/${repository}@${pushed.digest}`);
    expect(manifest.message).toContain('served a manifest whose sha256 is sha256:');
    const layer = await failure(
      pullArtifact(source(repository, { tag: 'v1' }), { credentials, fetch: tampering('blobs') }),
    );
    expect(layer.message).toMatch(/layer sha256:[a-f0-9]{64}: the layer's sha256 is sha256:/);
  });

  it('unpack limits apply to pulled layers', async () => {
    const repository = uniqueName('oci/app');
    await pushArtifact(directory(), `${url(repository)}:v1`, { credentials });
    const error = await failure(
      pullArtifact(source(repository, { tag: 'v1' }), {
        credentials,
        limits: {
          maxCompressedBytes: 1024 * 1024,
          maxTotalBytes: 1024 * 1024,
          maxFiles: 2,
          maxFileBytes: 1024,
        },
      }),
    );
    expect(error.message).toContain(`${bed.registry.host}/${repository}@sha256:`);
    expect(error.message).toContain('maxFiles (2');
  });
});

describe('ECR credentials', () => {
  function countingEcr() {
    const ecr = new ECRClient({});
    const counter = { calls: 0 };
    ecr.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetAuthorizationTokenCommand') counter.calls++;
        return next(args);
      },
      { step: 'initialize', name: 'countGetAuthorizationToken' },
    );
    return { ecr, counter };
  }

  it('caches the token until it expires, by the injected clock, then fetches a new one', async () => {
    const { ecr, counter } = countingEcr();
    let now = new Date();
    const clock: Clock = { ...systemClock, now: () => now };
    const ecrCreds = ecrCredentials(ecr, clock);
    const repository = uniqueName('oci/app');
    await pushArtifact(directory(), `${url(repository)}:v1`, { credentials: ecrCreds });
    expect(counter.calls).toBe(1);

    await Promise.all(
      [1, 2, 3].map(() => pullArtifact(source(repository, { tag: 'v1' }), { credentials: ecrCreds })),
    );
    expect(counter.calls).toBe(1);

    // The local endpoint's tokens last 12 hours; they are renewed 5 minutes before that.
    const start = now.getTime();
    now = new Date(start + 12 * 3600_000 - 6 * 60_000);
    await pullArtifact(source(repository, { tag: 'v1' }), { credentials: ecrCreds });
    expect(counter.calls).toBe(1);
    now = new Date(start + 12 * 3600_000 - 4 * 60_000);
    await pullArtifact(source(repository, { tag: 'v1' }), { credentials: ecrCreds });
    expect(counter.calls).toBe(2);

    // The new token is good for 12 hours from when it was issued.
    now = new Date(start + 60_000);
    await pullArtifact(source(repository, { tag: 'v1' }), { credentials: ecrCreds });
    expect(await ecrCreds(bed.registry.host)).toEqual({
      username: bed.registry.username,
      password: bed.registry.password,
    });
    expect(counter.calls).toBe(2);
  });

  it('shares one request between concurrent callers', async () => {
    const { ecr, counter } = countingEcr();
    const ecrCreds = ecrCredentials(ecr, systemClock);
    await Promise.all([1, 2, 3, 4].map(() => ecrCreds(bed.registry.host)));
    expect(counter.calls).toBe(1);
  });

  it('names the registry when GetAuthorizationToken fails', async () => {
    const ecr = new ECRClient({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 });
    const error = await failure(ecrCredentials(ecr, systemClock)(bed.registry.host));
    expect(error.message).toContain(`registry ${bed.registry.host}: ECR GetAuthorizationToken failed`);
  });
});
