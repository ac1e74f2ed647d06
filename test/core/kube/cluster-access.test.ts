import { systemClock } from '../../../functions/core/clock.ts';
import { EKSClient } from '@aws-sdk/client-eks';
import { STSClient } from '@aws-sdk/client-sts';
import { CoreV1Api } from '@kubernetes/client-node';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  connectToCluster,
  reusedConnections,
  type ClusterAccessDeps,
} from '../../../functions/core/kube/cluster-access.ts';
import { kubeConfigFor } from '../../../functions/core/kube/connection.ts';
import { testbed } from '../../support/testbed.ts';

const bed = testbed();
const dir = mkdtempSync(join(tmpdir(), 'sluice-cluster-access-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clock = { ...systemClock, now: () => new Date('2024-05-17T09:30:05Z') };
// AWS's documentation example key pair: fixed inputs, never a real credential.
const callerCredentials = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const caPem = readFileSync(bed.kube.caFile, 'utf8');

let fileCount = 0;
function writeKubeconfig(config: unknown, sub = ''): string {
  const folder = join(dir, sub || `k${++fileCount}`);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, 'kubeconfig');
  writeFileSync(path, stringify(config));
  return path;
}

function kubeconfig(
  options: { cluster?: Record<string, unknown>; user?: Record<string, unknown>; current?: string } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'local',
        cluster: options.cluster ?? {
          server: bed.kube.server,
          'certificate-authority-data': bed.kube.caData,
        },
      },
    ],
    users: [{ name: 'admin', user: options.user ?? { token: bed.kube.token } }],
    contexts: [
      { name: 'main', context: { cluster: 'local', user: 'admin' } },
      { name: 'other', context: { cluster: 'local', user: 'admin', namespace: 'kube-system' } },
    ],
    'current-context': options.current ?? 'main',
  };
}

const unusedAws: ClusterAccessDeps = {
  eks: () => {
    throw new Error('no EKS call expected');
  },
  sts: () => {
    throw new Error('no STS call expected');
  },
  credentials: async () => callerCredentials,
  clock,
};

describe('connectToCluster with a kubeconfig', () => {
  it('returns the current context server, CA data and token, which reach the API server', async () => {
    const path = writeKubeconfig(kubeconfig());
    const connection = await connectToCluster({ kubeconfig: path }, unusedAws);
    expect(connection).toEqual({ server: bed.kube.server, caData: bed.kube.caData, token: bed.kube.token });

    const api = kubeConfigFor(connection).makeApiClient(CoreV1Api);
    const namespaces = await api.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('default');
  });

  it('picks the named context', async () => {
    const config = kubeconfig({ current: 'missing' });
    config.clusters.push({
      name: 'second',
      cluster: { server: 'https://second.example:6443', 'certificate-authority-data': bed.kube.caData },
    });
    config.contexts.push({ name: 'second', context: { cluster: 'second', user: 'admin' } });
    const path = writeKubeconfig(config);
    const connection = await connectToCluster({ kubeconfig: path, context: 'second' }, unusedAws);
    expect(connection.server).toBe('https://second.example:6443');
  });

  it('reads the CA from a certificate-authority file and the token from a token-file, relative to the kubeconfig', async () => {
    const folder = join(dir, 'relative');
    mkdirSync(join(folder, 'pki'), { recursive: true });
    writeFileSync(join(folder, 'pki', 'ca.crt'), caPem);
    writeFileSync(join(folder, 'token'), `${bed.kube.token}\n`);
    const path = writeKubeconfig(
      kubeconfig({
        cluster: { server: bed.kube.server, 'certificate-authority': 'pki/ca.crt' },
        user: { 'token-file': 'token' },
      }),
      'relative',
    );
    const connection = await connectToCluster({ kubeconfig: path }, unusedAws);
    expect(connection.caData).toBe(Buffer.from(caPem).toString('base64'));
    expect(connection.token).toBe(bed.kube.token);

    const api = kubeConfigFor(connection).makeApiClient(CoreV1Api);
    await expect(api.readNamespace({ name: 'default' })).resolves.toMatchObject({
      metadata: { name: 'default' },
    });
  });

  it('accepts an absolute certificate-authority path', async () => {
    const path = writeKubeconfig(
      kubeconfig({ cluster: { server: bed.kube.server, 'certificate-authority': bed.kube.caFile } }),
    );
    const connection = await connectToCluster({ kubeconfig: path }, unusedAws);
    expect(connection.caData).toBe(Buffer.from(caPem).toString('base64'));
  });

  const refusals: Array<{ name: string; config: () => unknown; context?: string; error: RegExp }> = [
    {
      name: 'a missing context, listing the known ones',
      config: () => kubeconfig(),
      context: 'prod',
      error: /kubeconfig .*kubeconfig has no context "prod" \(it has "main", "other"\)/,
    },
    {
      name: 'no current-context and none named',
      config: () => ({ ...kubeconfig(), 'current-context': undefined }),
      error: /kubeconfig .* has no current-context/,
    },
    {
      name: 'a client-certificate user',
      config: () =>
        kubeconfig({
          user: {
            'client-certificate-data': Buffer.from(caPem).toString('base64'),
            'client-key-data': 'a2V5',
          },
        }),
      error: /context "main": user "admin" uses a client certificate; only bearer-token users are supported/,
    },
    {
      name: 'an exec-plugin user, suggesting the eks spec',
      config: () =>
        kubeconfig({
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1beta1',
              command: 'aws',
              args: [
                '--region',
                'eu-west-1',
                'eks',
                'get-token',
                '--cluster-name',
                'prod',
                '--output',
                'json',
              ],
            },
          },
        }),
      error:
        /user "admin" uses an exec plugin \(aws\); only bearer-token users are supported \(EKS uses tokens: target the cluster with \{ eks: \{ name: "prod", region: "eu-west-1" \} \} instead\)/,
    },
    {
      name: 'an auth-provider user',
      config: () => kubeconfig({ user: { 'auth-provider': { name: 'oidc', config: {} } } }),
      error: /uses the auth provider "oidc"; only bearer-token users are supported/,
    },
    {
      name: 'a basic-auth user',
      config: () => kubeconfig({ user: { username: 'admin', password: 'secret' } }),
      error: /uses basic authentication; only bearer-token users are supported/,
    },
    {
      name: 'a user without a token',
      config: () => kubeconfig({ user: {} }),
      error: /user "admin" has no token or token-file/,
    },
    {
      name: 'insecure-skip-tls-verify',
      config: () => kubeconfig({ cluster: { server: bed.kube.server, 'insecure-skip-tls-verify': true } }),
      error: /cluster "local" sets insecure-skip-tls-verify/,
    },
    {
      name: 'a cluster without a CA',
      config: () => kubeconfig({ cluster: { server: bed.kube.server } }),
      error: /cluster "local" has neither certificate-authority-data nor certificate-authority/,
    },
    {
      name: 'a missing certificate-authority file',
      config: () =>
        kubeconfig({ cluster: { server: bed.kube.server, 'certificate-authority': 'nowhere/ca.crt' } }),
      error: /cannot read certificate-authority .*nowhere\/ca\.crt/,
    },
    {
      name: 'a missing token-file',
      config: () => kubeconfig({ user: { 'token-file': 'no-token' } }),
      error: /cannot load kubeconfig .*: .*no-token/,
    },
  ];

  it.each(refusals)('refuses $name', async ({ config, context, error }) => {
    const path = writeKubeconfig(config());
    await expect(connectToCluster({ kubeconfig: path, context }, unusedAws)).rejects.toThrow(error);
  });

  it('names the path of a kubeconfig that does not exist', async () => {
    const path = join(dir, 'absent', 'kubeconfig');
    await expect(connectToCluster({ kubeconfig: path }, unusedAws)).rejects.toThrow(
      `cannot load kubeconfig ${path}: ENOENT`,
    );
  });
});

/** What AWS answered, recorded: status, headers and body as they come over the wire. */
interface WireResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A requestHandler for a real SDK client: records each signed request and answers it. */
function wire(answer: (request: HttpRequest) => WireResponse) {
  const requests: HttpRequest[] = [];
  const handler = {
    handle: async (request: HttpRequest): Promise<{ response: HttpResponse }> => {
      requests.push(request);
      const { statusCode, headers, body } = answer(request);
      return { response: { statusCode, headers, body: Readable.from([Buffer.from(body)]) } };
    },
  };
  return { requests, handler };
}

const caData = Buffer.from(caPem).toString('base64');

function describeClusterResponse(cluster: Record<string, unknown>): WireResponse {
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/json',
      'x-amzn-requestid': '8a3f6b2e-0d4c-4a1e-9f43-2d1c5e7b9a10',
    },
    body: JSON.stringify({ cluster }),
  };
}

const activeCluster = {
  name: 'prod',
  arn: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod',
  createdAt: 1715930000.123,
  version: '1.33',
  endpoint: 'https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com',
  certificateAuthority: { data: caData },
  status: 'ACTIVE',
};

const assumeRoleXml = `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <SourceIdentity>sluice</SourceIdentity>
    <AssumedRoleUser>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:sluice-prod</AssumedRoleId>
      <Arn>arn:aws:sts::123456789012:assumed-role/deployer/sluice-prod</Arn>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>
      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
      <SessionToken>IQoJb3JpZ2luX2VjEXAMPLE+session/token==</SessionToken>
      <Expiration>2024-05-17T10:30:05Z</Expiration>
    </Credentials>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>`;

function awsDeps(eksAnswer: () => WireResponse) {
  const eksWire = wire(eksAnswer);
  const stsWire = wire(() => ({
    statusCode: 200,
    headers: { 'content-type': 'text/xml' },
    body: assumeRoleXml,
  }));
  const deps: ClusterAccessDeps = {
    eks: (region, credentials) =>
      new EKSClient({ region, credentials, requestHandler: eksWire.handler, maxAttempts: 1 }),
    sts: (region, credentials) =>
      new STSClient({ region, credentials, requestHandler: stsWire.handler, maxAttempts: 1 }),
    credentials: async () => callerCredentials,
    clock,
  };
  return { deps, eksRequests: eksWire.requests, stsRequests: stsWire.requests };
}

function tokenUrl(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  return new URL(Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString('utf8'));
}

describe('connectToCluster with EKS', () => {
  // The testbed points AWS_ENDPOINT_URL_STS and _EKS at the local stand-ins; these tests check the
  // regional endpoints a Lambda function reaches, so the SDK must not see them.
  const local = ['AWS_ENDPOINT_URL_STS', 'AWS_ENDPOINT_URL_EKS'].map(
    (name) => [name, process.env[name]] as const,
  );
  beforeEach(() => {
    for (const [name] of local) delete process.env[name];
  });
  afterEach(() => {
    for (const [name, value] of local) if (value !== undefined) process.env[name] = value;
  });

  it('describes the cluster with the caller credentials and signs a token for it', async () => {
    const { deps, eksRequests, stsRequests } = awsDeps(() => describeClusterResponse(activeCluster));
    const connection = await connectToCluster({ eks: { name: 'prod', region: 'eu-west-1' } }, deps);

    expect(connection.server).toBe(activeCluster.endpoint);
    expect(connection.caData).toBe(caData);
    expect(connection.expiresAt).toEqual(new Date('2024-05-17T09:44:05Z'));
    expect(stsRequests).toHaveLength(0);
    expect(eksRequests).toHaveLength(1);
    const [request] = eksRequests;
    expect(request?.method).toBe('GET');
    expect(request?.hostname).toBe('eks.eu-west-1.amazonaws.com');
    expect(request?.path).toBe('/clusters/prod');
    expect(request?.headers.authorization).toContain('Credential=AKIAIOSFODNN7EXAMPLE/');

    const url = tokenUrl(connection.token);
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIAIOSFODNN7EXAMPLE\/20240517\/eu-west-1\/sts\//,
    );
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
  });

  it('assumes roleArn and uses those credentials for DescribeCluster and the token', async () => {
    const { deps, eksRequests, stsRequests } = awsDeps(() => describeClusterResponse(activeCluster));
    const roleArn = 'arn:aws:iam::123456789012:role/deployer';
    const connection = await connectToCluster({ eks: { name: 'prod', region: 'eu-west-1', roleArn } }, deps);

    expect(stsRequests).toHaveLength(1);
    const [assume] = stsRequests;
    expect(assume?.hostname).toBe('sts.eu-west-1.amazonaws.com');
    expect(assume?.headers.authorization).toContain('Credential=AKIAIOSFODNN7EXAMPLE/');
    const form = new URLSearchParams(String(assume?.body));
    expect(form.get('Action')).toBe('AssumeRole');
    expect(form.get('RoleArn')).toBe(roleArn);
    expect(form.get('RoleSessionName')).toBe('sluice-prod');

    expect(eksRequests[0]?.headers.authorization).toContain('Credential=ASIAIOSFODNN7EXAMPLE/');
    expect(eksRequests[0]?.headers['x-amz-security-token']).toBe('IQoJb3JpZ2luX2VjEXAMPLE+session/token==');

    const url = tokenUrl(connection.token);
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^ASIAIOSFODNN7EXAMPLE\//);
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('IQoJb3JpZ2luX2VjEXAMPLE+session/token==');
    expect(connection.server).toBe(activeCluster.endpoint);
  });

  it('says when the cluster has no endpoint yet', async () => {
    const creating = { ...activeCluster, status: 'CREATING', endpoint: undefined, certificateAuthority: {} };
    const { deps } = awsDeps(() => describeClusterResponse(creating));
    await expect(connectToCluster({ eks: { name: 'prod', region: 'eu-west-1' } }, deps)).rejects.toThrow(
      'EKS cluster "prod" in eu-west-1 has no endpoint yet (status CREATING)',
    );
  });

  it('says when the cluster is being deleted', async () => {
    const { deps } = awsDeps(() => describeClusterResponse({ ...activeCluster, status: 'DELETING' }));
    await expect(connectToCluster({ eks: { name: 'prod', region: 'eu-west-1' } }, deps)).rejects.toThrow(
      'EKS cluster "prod" in eu-west-1 is DELETING',
    );
  });

  it('names the cluster when DescribeCluster fails', async () => {
    const { deps } = awsDeps(() => ({
      statusCode: 404,
      headers: {
        'content-type': 'application/json',
        'x-amzn-errortype': 'ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.eks/',
        'x-amzn-requestid': '5e8c1f0a-6a34-4f3c-a4a5-1f0c3b0d2e11',
      },
      body: JSON.stringify({ message: 'No cluster found for name: staging.' }),
    }));
    await expect(connectToCluster({ eks: { name: 'staging', region: 'eu-west-1' } }, deps)).rejects.toThrow(
      'cannot describe EKS cluster "staging" in eu-west-1: ResourceNotFoundException: No cluster found for name: staging.',
    );
  });
});

describe('reusedConnections', () => {
  it('describes an EKS cluster once while its token lasts, again a minute before it expires', async () => {
    const { deps, eksRequests } = awsDeps(() => describeClusterResponse(activeCluster));
    let now = new Date('2024-05-17T09:30:05Z');
    const connect = reusedConnections({ ...deps, clock: { ...systemClock, now: () => now } });
    const prod = { eks: { name: 'prod', region: 'eu-west-1' } };
    const first = await connect(prod);
    expect(await connect(prod)).toBe(first);
    expect(eksRequests).toHaveLength(1);
    // Another role is another connection.
    await connect({ eks: { ...prod.eks, roleArn: 'arn:aws:iam::123456789012:role/deployer' } });
    expect(eksRequests).toHaveLength(2);
    // The token expires at 09:44:05 (first.expiresAt); from 09:43:05 on it is replaced.
    now = new Date(first.expiresAt!.getTime() - 60_000);
    expect(await connect(prod)).not.toBe(first);
    expect(eksRequests).toHaveLength(3);
  });
});
