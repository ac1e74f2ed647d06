// Smoke tests proving each local component is the real thing, reached the way sluice reaches AWS.
import { ConditionalCheckFailedException, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ECRClient, GetAuthorizationTokenCommand } from '@aws-sdk/client-ecr';
import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpsRequest } from '../support/https.ts';
import { testbed, uniqueName } from '../support/testbed.ts';
import { namespacedCrd } from '../support/crd.ts';
import { envFile } from '../../dev/components.ts';

const bed = testbed();

describe('kube-apiserver', () => {
  const objects = () => KubernetesObjectApi.makeApiClient(bed.kubeConfig());
  const apply = <T extends KubernetesObject>(object: T) =>
    objects().patch(object, undefined, undefined, 'sluice-smoke', true, PatchStrategy.ServerSideApply);

  it('server-side applies a CRD, reports it Established, and serves its custom resources', async () => {
    const group = `${uniqueName('smoke')}.sluice.test`;
    await apply(
      namespacedCrd({
        group,
        kind: 'Widget',
        plural: 'widgets',
        specProperties: { size: { type: 'integer' } },
      }),
    );
    await expect
      .poll(
        async () => {
          const crd = await objects().read({
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: { name: `widgets.${group}` },
          });
          const conditions = (crd as { status?: { conditions?: { type: string; status: string }[] } }).status
            ?.conditions;
          return conditions?.find((c) => c.type === 'Established')?.status;
        },
        { timeout: 20_000 },
      )
      .toBe('True');

    await apply({
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'default' },
      spec: { size: 3 },
    });
    const widget = await objects().read({
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'default' },
    });
    expect((widget as { spec?: { size?: number } }).spec?.size).toBe(3);
    expect(widget.metadata?.managedFields?.[0]?.manager).toBe('sluice-smoke');
  });

  it('rejects an invalid Deployment with 422 Invalid', async () => {
    const response = await httpsRequest(`${bed.kube.server}/apis/apps/v1/namespaces/default/deployments`, {
      method: 'POST',
      ca: readFileSync(bed.kube.caFile),
      headers: { authorization: `Bearer ${bed.kube.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'broken' },
        spec: { template: {} },
      }),
    });
    expect(response.status).toBe(422);
    expect(JSON.parse(response.body)).toMatchObject({ kind: 'Status', reason: 'Invalid' });
  });

  it('answers an unauthenticated request with 401 over TLS signed by its own CA', async () => {
    const response = await httpsRequest(`${bed.kube.server}/api/v1/namespaces`, {
      ca: readFileSync(bed.kube.caFile),
    });
    expect(response.status).toBe(401);
  });

  it('refuses a TLS client that does not trust its CA', async () => {
    await expect(httpsRequest(`${bed.kube.server}/version`, { ca: '' })).rejects.toThrow(/certificate/i);
  });
});

describe('OCI registry', () => {
  const basic = `Basic ${Buffer.from(`${bed.registry.username}:${bed.registry.password}`).toString('base64')}`;
  const registry = (path: string, init: RequestInit = {}) =>
    fetch(`http://${bed.registry.host}${path}`, {
      ...init,
      headers: { authorization: basic, ...(init.headers as object) },
    });
  const sha256 = (data: Buffer | string) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

  async function pushBlob(repo: string, data: Buffer): Promise<string> {
    const digest = sha256(data);
    const start = await registry(`/v2/${repo}/blobs/uploads/`, { method: 'POST' });
    expect(start.status).toBe(202);
    const location = new URL(start.headers.get('location')!, `http://${bed.registry.host}`);
    location.searchParams.set('digest', digest);
    const put = await registry(location.pathname + location.search, {
      method: 'PUT',
      body: data,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(put.status).toBe(201);
    return digest;
  }

  it('requires basic auth like ECR', async () => {
    expect((await fetch(`http://${bed.registry.host}/v2/`)).status).toBe(401);
    expect((await registry('/v2/')).status).toBe(200);
  });

  it('round-trips an artifact with Flux media types, digests verified', async () => {
    const repo = uniqueName('smoke/app');
    const layer = Buffer.from('not really a tarball, but bytes with a digest');
    const config = Buffer.from('{}');
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.cncf.flux.config.v1+json',
        digest: await pushBlob(repo, config),
        size: config.length,
      },
      layers: [
        {
          mediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip',
          digest: await pushBlob(repo, layer),
          size: layer.length,
        },
      ],
    });
    const put = await registry(`/v2/${repo}/manifests/v1`, {
      method: 'PUT',
      body: manifest,
      headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    });
    expect(put.status).toBe(201);
    expect(put.headers.get('docker-content-digest')).toBe(sha256(manifest));

    const pulled = await registry(`/v2/${repo}/manifests/v1`, {
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    const body = await pulled.text();
    expect(sha256(body)).toBe(sha256(manifest));
    const layerRef = (JSON.parse(body) as { layers: { digest: string; mediaType: string }[] }).layers[0]!;
    expect(layerRef.mediaType).toBe('application/vnd.cncf.flux.content.v1.tar+gzip');
    const blob = Buffer.from(await (await registry(`/v2/${repo}/blobs/${layerRef.digest}`)).arrayBuffer());
    expect(sha256(blob)).toBe(layerRef.digest);
    expect(blob.equals(layer)).toBe(true);
  });
});

describe('DynamoDB Local', () => {
  it('fails a conditional put on the second attempt', async () => {
    const ddb = bed.dynamoDb();
    const item = { pk: { S: `smoke#${uniqueName('lease')}` }, sk: { S: 'lease' } };
    const put = () =>
      ddb.send(
        new PutItemCommand({
          TableName: bed.dynamodb.table,
          Item: item,
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    await expect(put()).resolves.toBeDefined();
    await expect(put()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  });
});

describe('ECR API endpoint', () => {
  it('returns an authorization token that the registry accepts', async () => {
    const ecr = new ECRClient({});
    const { authorizationData } = await ecr.send(new GetAuthorizationTokenCommand({}));
    const data = authorizationData?.[0];
    expect(data?.expiresAt).toBeInstanceOf(Date);
    expect(data!.expiresAt!.getTime()).toBeGreaterThan(Date.now());
    const [user, password] = Buffer.from(data!.authorizationToken!, 'base64').toString('utf8').split(':');
    expect(user).toBe('AWS');
    const answer = await fetch(`${data!.proxyEndpoint}/v2/`, {
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });
    expect(answer.status).toBe(200);
  });
});

describe('the dev env file', () => {
  it("sourced in a shell, points kubectl and the AWS SDK at the components and puts only kubectl's folder before the shell's own PATH", () => {
    const text = envFile(bed);
    expect(text).not.toContain(process.env.PATH!);
    const shellPath = '/usr/local/bin:/usr/bin:/bin';
    const sourced = execFileSync(
      'bash',
      ['--norc', '--noprofile', '-c', `${text}\nprintf '%s\\n%s\\n%s' "$PATH" "$KUBECONFIG" "$SLUICE_TABLE"`],
      {
        env: { PATH: shellPath },
        encoding: 'utf8',
      },
    ).split('\n');
    expect(sourced).toEqual([
      `${dirname(bed.kubectl)}:${shellPath}`,
      bed.kube.kubeconfig,
      bed.dynamodb.table,
    ]);
  });
});
