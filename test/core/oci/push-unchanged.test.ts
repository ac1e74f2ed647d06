// `sluice push` skips a push whose files the tag already holds, compared by content: an artifact
// packed differently (other tar headers, other gzip bytes, as `flux push artifact` makes them)
// with the same files counts as unchanged, where `flux diff artifact` compares compressed bytes.
// On the real local registry.
import { ECRClient } from '@aws-sdk/client-ecr';
import { rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import * as tar from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import {
  anonymousCredentials,
  credentialsFor,
  ecrCredentials,
  FLUX_CONFIG_MEDIA_TYPE,
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  packDirectory,
  pushArtifact,
  RegistryClient,
  resolveArtifact,
  type RegistryCredentials,
} from '../../../functions/core/oci/index.ts';
import { fileTree } from '../../support/file-tree.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const FILES = {
  'deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n',
  'config/app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n',
};

const directory = (files: Record<string, string> = FILES) => fileTree(files, 'sluice-push-');

let credentials: RegistryCredentials;
const url = (repository: string) => `oci://${bed.registry.host}/${repository}`;
const tagDigest = async (repository: string, tag: string) =>
  (await resolveArtifact({ url: url(repository), tag }, { credentials })).digest;

beforeAll(() => {
  const providers = { aws: ecrCredentials(new ECRClient({}), systemClock), generic: anonymousCredentials };
  credentials = credentialsFor({ url: url('any'), provider: 'aws' }, providers);
});

/** Pushes the files as another tool would: tar headers with mtimes and owners, gzip at another level. */
async function pushPackedElsewhere(repository: string, tag: string, files: Record<string, string>) {
  const dir = directory(files);
  const stream = tar.create({ cwd: dir, gzip: false, portable: false }, Object.keys(files).reverse());
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  rmSync(dir, { recursive: true, force: true });
  const layer = gzipSync(Buffer.concat(chunks), { level: 1 });
  const client = new RegistryClient({ host: bed.registry.host, credentials });
  const config = Buffer.from('{}');
  const manifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    config: { mediaType: FLUX_CONFIG_MEDIA_TYPE, digest: await client.pushBlob(repository, config), size: 2 },
    layers: [
      {
        mediaType: FLUX_CONTENT_MEDIA_TYPE,
        digest: await client.pushBlob(repository, layer),
        size: layer.length,
      },
    ],
    annotations: { 'org.opencontainers.image.revision': 'main@sha1:4f2c9e0d' },
  };
  const digest = await client.putManifest(
    repository,
    tag,
    Buffer.from(JSON.stringify(manifest)),
    OCI_MANIFEST_MEDIA_TYPE,
  );
  return { digest, layer };
}

describe('push: unchanged content is not pushed again', () => {
  it('the same directory twice: the second push is skipped, reporting the existing digest', async () => {
    const repository = uniqueName('push/same');
    const dir = directory();
    const first = await pushArtifact(dir, `${url(repository)}:v1`, { credentials, skipUnchanged: true });
    expect(first.unchanged).toBe(false);
    const second = await pushArtifact(dir, `${url(repository)}:v1`, {
      credentials,
      skipUnchanged: true,
      // A later clock would write another created annotation, so another digest, had it pushed.
      clock: { ...systemClock, now: () => new Date('2030-01-01T00:00:00Z') },
    });
    expect(second).toEqual({ ...first, unchanged: true });
    expect(await tagDigest(repository, 'v1')).toBe(first.digest);
  });

  it('the same files packed by another tool (other archive bytes): unchanged, with its origin revision', async () => {
    const repository = uniqueName('push/flux');
    const elsewhere = await pushPackedElsewhere(repository, 'v1', FILES);
    expect(elsewhere.layer.equals(await packDirectory(directory()))).toBe(false);
    const pushed = await pushArtifact(directory(), `${url(repository)}:v1`, {
      credentials,
      skipUnchanged: true,
    });
    expect(pushed).toMatchObject({
      unchanged: true,
      digest: elsewhere.digest,
      originRevision: 'main@sha1:4f2c9e0d',
    });
    expect(await tagDigest(repository, 'v1')).toBe(elsewhere.digest);
  });

  it.each([
    ['a file changed', { ...FILES, 'deployment.yaml': `${FILES['deployment.yaml']}  labels: {a: b}\n` }],
    ['a file added', { ...FILES, 'extra.yaml': 'kind: ConfigMap\n' }],
    ['a file removed', { 'deployment.yaml': FILES['deployment.yaml'] }],
    ['a file moved', { 'deployment.yaml': FILES['deployment.yaml'], 'app.yaml': FILES['config/app.yaml'] }],
  ])('%s: pushed, and the tag moves', async (_, files) => {
    const repository = uniqueName('push/changed');
    const before = await pushPackedElsewhere(repository, 'v1', FILES);
    const pushed = await pushArtifact(directory(files), `${url(repository)}:v1`, {
      credentials,
      skipUnchanged: true,
    });
    expect(pushed.unchanged).toBe(false);
    expect(pushed.digest).not.toBe(before.digest);
    expect(await tagDigest(repository, 'v1')).toBe(pushed.digest);
  });

  it('a tag that does not exist yet, or another tag: pushed', async () => {
    const repository = uniqueName('push/new');
    const dir = directory();
    expect(
      (await pushArtifact(dir, `${url(repository)}:v1`, { credentials, skipUnchanged: true })).unchanged,
    ).toBe(false);
    expect(
      (await pushArtifact(dir, `${url(repository)}:v2`, { credentials, skipUnchanged: true })).unchanged,
    ).toBe(false);
  });

  it('without skipUnchanged (sluice push --force) the same files are pushed again', async () => {
    const repository = uniqueName('push/force');
    const dir = directory();
    const first = await pushArtifact(dir, `${url(repository)}:v1`, { credentials });
    const again = await pushArtifact(dir, `${url(repository)}:v1`, {
      credentials,
      clock: { ...systemClock, now: () => new Date('2030-01-01T00:00:00Z') },
    });
    expect(again.unchanged).toBe(false);
    expect(again.digest).not.toBe(first.digest);
  });
});
