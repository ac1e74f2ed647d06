// The artifact cache of a warm container, on the real local registry: a revision pulled before is
// not fetched again (only what the tag points at is asked), and a cached layer that no longer
// hashes to its digest is dropped and fetched anew, never unpacked.
import { ECRClient } from '@aws-sdk/client-ecr';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/core/clock.ts';
import { ArtifactCache } from '../../../functions/core/oci/artifact-cache.ts';
import {
  anonymousCredentials,
  credentialsFor,
  ecrCredentials,
  pullResolved,
  pushArtifact,
  resolveArtifact,
  type RegistryCredentials,
} from '../../../functions/core/oci/index.ts';
import { fileTree } from '../../support/file-tree.ts';
import { testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
let credentials: RegistryCredentials;
const requests: string[] = [];
/** The real fetch, each request's method and path noted. */
const counting: typeof fetch = (input, init) => {
  requests.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
  return fetch(input, init);
};

beforeAll(() => {
  const providers = { aws: ecrCredentials(new ECRClient({}), systemClock), generic: anonymousCredentials };
  credentials = credentialsFor({ url: `oci://${bed.registry.host}/any`, provider: 'aws' }, providers);
});

async function pushed(repository: string) {
  const source = { url: `oci://${bed.registry.host}/${repository}`, tag: 'main' };
  const files = { 'app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n' };
  await pushArtifact(fileTree(files, 'sluice-cache-'), `${source.url}:main`, { credentials });
  return source;
}

describe('ArtifactCache', () => {
  it('pulls a revision it has pulled before asking the registry only what the tag points at, once', async () => {
    const repository = uniqueName('cache/hit');
    const source = await pushed(repository);
    const cache = new ArtifactCache(mkdtempSync(join(tmpdir(), 'sluice-cache-test-')));
    const deps = { credentials, fetch: counting, cache };
    const resolved = await resolveArtifact(source, deps);
    const first = await pullResolved(source, resolved, deps);
    const fetched = (what: string) => requests.filter((r) => r.startsWith(`GET `) && r.includes(`/${what}/`));
    expect(fetched('manifests').length).toBeGreaterThan(0);
    expect(fetched('blobs').length).toBeGreaterThan(0);
    requests.length = 0;
    const again = await pullResolved(source, await resolveArtifact(source, deps), deps);
    expect(again.files).toEqual(first.files);
    expect(fetched('manifests')).toEqual([]);
    expect(fetched('blobs')).toEqual([]);
    // The registry took Basic auth before: the credentials go with the first request, no 401 first.
    expect(requests).toEqual([`HEAD /v2/${repository}/manifests/main`]);
  });

  it('drops a cached layer that does not hash to its digest and fetches it anew', async () => {
    const source = await pushed(uniqueName('cache/tamper'));
    const root = mkdtempSync(join(tmpdir(), 'sluice-cache-test-'));
    const cache = new ArtifactCache(root);
    const deps = { credentials, fetch: counting, cache };
    const resolved = await resolveArtifact(source, deps);
    const first = await pullResolved(source, resolved, deps);
    const dir = join(root, readdirSync(root)[0]!);
    for (const file of readdirSync(dir)) writeFileSync(join(dir, file), 'not the layer');
    requests.length = 0;
    const again = await pullResolved(source, resolved, deps);
    expect(again.files).toEqual(first.files);
    expect(requests.filter((r) => r.includes('/blobs/')).length).toBeGreaterThan(0);
    // The layer fetched anew is cached again: the next pull fetches nothing.
    requests.length = 0;
    await pullResolved(source, resolved, deps);
    expect(requests.filter((r) => r.includes('/blobs/'))).toEqual([]);
  });
});
