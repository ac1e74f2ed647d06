// A registry that lies, breaks or refuses (through a fault proxy in front of the real one) and an
// ECR API that fails (the local ECR endpoint with faults): the reconcile fails naming the
// problem and changes nothing.
import { ECRClient } from '@aws-sdk/client-ecr';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { systemClock } from '../../functions/core/clock.ts';
import { ecrCredentials, sha256Digest } from '../../functions/core/oci/index.ts';
import { rawRegistry } from '../support/deliveries.ts';
import { createEcrEndpoint, type EcrFault } from '../../dev/ecr-endpoint.ts';
import {
  startRegistryFaultProxy,
  type RegistryAnswer,
  type RegistryFaultProxy,
  type Tamper,
} from '../support/registry-fault-proxy.ts';
import { testbed } from '../support/testbed.ts';
import { FLUX_LAYER, OCI_MANIFEST, hostileSuite, type Hostile, type HostileCase } from './hostile.ts';

const bed = testbed();
let proxy: RegistryFaultProxy;
let ecrEndpoint: string;
let ecrFault: ((operation: string) => EcrFault | undefined) | undefined;
let ecrToken: string | undefined;
const ecr = createEcrEndpoint({
  registryUrl: `http://${bed.registry.host}`,
  username: bed.registry.username,
  password: bed.registry.password,
  faults: { error: (operation) => ecrFault?.(operation), token: () => ecrToken },
});

beforeAll(async () => {
  proxy = await startRegistryFaultProxy(bed);
  await new Promise<void>((resolve) => ecr.listen(0, '127.0.0.1', resolve));
  ecrEndpoint = `http://127.0.0.1:${(ecr.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await proxy.close();
  ecr.closeAllConnections();
  await new Promise((resolve) => ecr.close(resolve));
});

const isManifest = (path: string) => path.includes('/manifests/');
const isLayer = (path: string, answer: RegistryAnswer) =>
  path.includes('/blobs/sha256:') && answer.body[0] === 0x1f && answer.body[1] === 0x8b;

/** A fault in the proxy for the duration of one case. */
const tampering = (tamper: Tamper) => (): (() => void) => {
  proxy.tamper(tamper);
  return () => proxy.tamper(undefined);
};

/** The pushed revision's real manifest, for lies that must still point at real blobs. */
async function realManifest(
  h: Hostile,
): Promise<{ config: object; layers: { digest: string; size: number }[] }> {
  const digest = await h.pushChanged();
  const manifest = await rawRegistry(bed).getManifest(h.repository, digest);
  return JSON.parse(manifest.body.toString('utf8')) as {
    config: object;
    layers: { digest: string; size: number }[];
  };
}

/**
 * A registry that lies consistently: its tag resolves (HEAD) to the digest of `body`, and it serves
 * `body` for that digest, so only the content itself can give the lie away.
 */
function consistentLie(body: () => Buffer, mediaType = OCI_MANIFEST): Tamper {
  return ({ method, path }) => {
    if (!isManifest(path)) return undefined;
    const text = body();
    const headers = { 'content-type': mediaType, 'docker-content-digest': sha256Digest(text) };
    return method === 'HEAD'
      ? { status: 200, headers, body: Buffer.alloc(0), declaredLength: text.length }
      : { status: 200, headers, body: text };
  };
}

const errorAnswer = (status: number, code: string, extra: Record<string, string> = {}): RegistryAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...extra },
  body: Buffer.from(JSON.stringify({ errors: [{ code, message: `injected ${code}` }] })),
});

/** Case state shared between push and around (the real manifest a lie is built from). */
let real: Awaited<ReturnType<typeof realManifest>>;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

const ecrDeps = (h: Hostile) => ({
  ...h.deps,
  registryCredentials: () => ecrCredentials(new ECRClient({ endpoint: ecrEndpoint }), systemClock),
});
const ecrFailing = (fault: EcrFault | undefined, token?: string) => (): (() => void) => {
  ecrFault = (operation) => (operation === 'GetAuthorizationToken' ? fault : undefined);
  ecrToken = token;
  return () => {
    ecrFault = undefined;
    ecrToken = undefined;
  };
};

const cases: HostileCase[] = [
  {
    name: 'a manifest whose bytes do not match its digest',
    push: (h) => h.pushChanged(),
    around: tampering(({ method, path }, answer) => {
      if (method !== 'GET' || !isManifest(path) || answer.status !== 200) return undefined;
      const manifest = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
      return { ...answer, body: json({ ...manifest, annotations: { tampered: 'yes' } }) };
    }),
    reason: 'ArtifactFailed',
    message: /the registry served a manifest whose sha256 is sha256:[a-f0-9]{64}/,
  },
  {
    name: 'a manifest that is not JSON',
    push: (h) => h.pushChanged(),
    around: tampering(consistentLie(() => Buffer.from('<html>not a manifest</html>'))),
    reason: 'ArtifactFailed',
    message: /the manifest is not JSON/,
  },
  {
    name: 'an image index instead of an artifact manifest',
    push: (h) => h.pushChanged(),
    around: tampering(
      consistentLie(
        () => json({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [] }),
        'application/vnd.oci.image.index.v1+json',
      ),
    ),
    reason: 'ArtifactFailed',
    message: /is an image index \(application\/vnd\.oci\.image\.index\.v1\+json\), not an artifact manifest/,
  },
  {
    name: 'a manifest without layers',
    push: async (h) => (real = await realManifest(h)),
    around: tampering(
      consistentLie(() =>
        json({ schemaVersion: 2, mediaType: OCI_MANIFEST, config: real.config, layers: [] }),
      ),
    ),
    reason: 'ArtifactFailed',
    message:
      /no layer has media type application\/vnd\.cncf\.flux\.content\.v1\.tar\+gzip; the manifest has no layers/,
  },
  {
    name: 'a layer descriptor without a digest',
    push: async (h) => (real = await realManifest(h)),
    around: tampering(
      consistentLie(() =>
        json({
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          config: real.config,
          layers: [{ mediaType: FLUX_LAYER, size: real.layers[0]!.size }],
        }),
      ),
    ),
    reason: 'ArtifactFailed',
    message: /layer's descriptor has no valid sha256 digest and size/,
  },
  {
    name: 'a layer descriptor pointing at the config blob',
    push: async (h) => (real = await realManifest(h)),
    around: tampering(
      consistentLie(() =>
        json({
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          config: real.config,
          layers: [{ ...(real.config as { digest: string; size: number }), mediaType: FLUX_LAYER }],
        }),
      ),
    ),
    reason: 'ArtifactFailed',
    message: /layer sha256:[a-f0-9]{64}: the layer is not valid gzip/,
  },
  {
    name: 'layer bytes that do not match the layer digest',
    push: (h) => h.pushChanged(),
    around: tampering(({ method, path }, answer) => {
      if (method !== 'GET' || !isLayer(path, answer)) return undefined;
      const body = Buffer.from(answer.body);
      body[body.length - 10]! ^= 0xff;
      return { ...answer, body };
    }),
    reason: 'ArtifactFailed',
    message: /layer sha256:[a-f0-9]{64}: the layer's sha256 is sha256:[a-f0-9]{64}/,
  },
  {
    name: 'a truncated layer',
    push: (h) => h.pushChanged(),
    around: tampering(({ method, path }, answer) =>
      method === 'GET' && isLayer(path, answer)
        ? { ...answer, body: answer.body.subarray(0, Math.floor(answer.body.length / 2)) }
        : undefined,
    ),
    reason: 'ArtifactFailed',
    message: /the registry served \d+ bytes, the descriptor says \d+/,
  },
  {
    name: 'a connection cut in the middle of the layer',
    push: (h) => h.pushChanged(),
    around: tampering(({ method, path }, answer) =>
      method === 'GET' && isLayer(path, answer)
        ? {
            ...answer,
            body: answer.body.subarray(0, Math.floor(answer.body.length / 2)),
            declaredLength: answer.body.length,
          }
        : undefined,
    ),
    reason: 'ArtifactFailed',
    message: /sha256:[a-f0-9]{64}: the connection broke while reading the blob/,
  },
  {
    name: 'registry 401 for every request',
    push: (h) => h.pushChanged(),
    around: tampering(() =>
      errorAnswer(401, 'UNAUTHORIZED', { 'www-authenticate': 'Basic realm="registry"' }),
    ),
    reason: 'ArtifactFailed',
    message: /credentials were refused \(HTTP 401, UNAUTHORIZED/,
  },
  {
    name: 'registry 403 for the repository',
    push: (h) => h.pushChanged(),
    around: tampering(() => errorAnswer(403, 'DENIED')),
    reason: 'ArtifactFailed',
    message: /access denied: credentials were refused for this repository \(HTTP 403/,
  },
  {
    name: 'registry 404 for the layer blob',
    push: (h) => h.pushChanged(),
    around: tampering(({ path }, answer) =>
      isLayer(path, answer) ? errorAnswer(404, 'BLOB_UNKNOWN') : undefined,
    ),
    reason: 'ArtifactFailed',
    message: /sha256:[a-f0-9]{64}: blob not found \(HTTP 404, BLOB_UNKNOWN/,
  },
  {
    name: 'registry 500 for the manifest',
    push: (h) => h.pushChanged(),
    around: tampering(({ path }) => (isManifest(path) ? errorAnswer(500, 'UNKNOWN') : undefined)),
    reason: 'ArtifactFailed',
    message: /the registry refused the manifest request \(HTTP 500/,
  },
  {
    name: 'registry 429 (rate limited)',
    push: (h) => h.pushChanged(),
    around: tampering(({ path }) => (isManifest(path) ? errorAnswer(429, 'TOOMANYREQUESTS') : undefined)),
    reason: 'ArtifactFailed',
    message: /rate limited by the registry \(HTTP 429/,
  },
  {
    name: 'a registry that hangs up',
    push: (h) => h.pushChanged(),
    around: tampering(() => 'hangup'),
    reason: 'ArtifactFailed',
    message: /cannot reach registry 127\.0\.0\.1:\d+/,
  },
  {
    name: 'ECR GetAuthorizationToken denied',
    push: (h) => h.pushChanged(),
    deps: ecrDeps,
    around: ecrFailing({
      status: 400,
      type: 'AccessDeniedException',
      message: 'User is not authorized to perform: ecr:GetAuthorizationToken',
    }),
    reason: 'ArtifactFailed',
    message: /ECR GetAuthorizationToken failed: User is not authorized to perform: ecr:GetAuthorizationToken/,
  },
  {
    name: 'ECR GetAuthorizationToken failing with a server error',
    push: (h) => h.pushChanged(),
    deps: ecrDeps,
    around: ecrFailing({
      status: 500,
      type: 'ServerException',
      message: 'injected: ECR is having a bad day',
    }),
    reason: 'ArtifactFailed',
    message: /ECR GetAuthorizationToken failed: injected: ECR is having a bad day/,
  },
  {
    name: 'an ECR token that is not user:password',
    push: (h) => h.pushChanged(),
    deps: ecrDeps,
    around: ecrFailing(undefined, Buffer.from('no colon here').toString('base64')),
    reason: 'ArtifactFailed',
    message: /ECR GetAuthorizationToken returned no usable token/,
  },
  {
    name: 'an ECR token the registry refuses',
    push: (h) => h.pushChanged(),
    deps: ecrDeps,
    around: ecrFailing(undefined, Buffer.from('AWS:expired-or-forged').toString('base64')),
    reason: 'ArtifactFailed',
    message: /credentials were refused \(HTTP 401/,
  },
];

hostileSuite(
  'a lying, broken or refusing registry changes nothing and the status says why',
  { bed, kc: bed.kubeConfig(), registryHost: () => proxy.host },
  cases,
);
