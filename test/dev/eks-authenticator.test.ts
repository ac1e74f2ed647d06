// A delivery's `{ eks: { name, region } }` on the local components, end to end: connectToCluster
// with the real EKS and STS clients (reaching the stand-ins by AWS_ENDPOINT_URL_*, as in the
// handler) describes the cluster, makes a token and reaches the real kube-apiserver, whose token
// webhook verifies it as EKS does and maps the caller by the cluster's access entries.
import { EKSClient } from '@aws-sdk/client-eks';
import { STSClient } from '@aws-sdk/client-sts';
import {
  AuthenticationV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_EKS_CLUSTER } from '../../dev/components.ts';
import { reviewEksToken } from '../../dev/eks-authenticator.ts';
import { putStandInAccessEntry, writeStandInEksCluster } from '../../dev/eks-clusters.ts';
import { TEST_IDENTITIES, type TestIdentity } from '../../dev/sigv4-identity.ts';
import { systemClock, type Clock } from '../../functions/core/clock.ts';
import { connectToCluster, type ClusterAccessDeps } from '../../functions/core/kube/cluster-access.ts';
import { kubeConfigFor } from '../../functions/core/kube/connection.ts';
import { eksToken } from '../../functions/core/kube/eks-token.ts';
import { createNamespace, testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const region = 'us-east-1';
const cluster = uniqueName('eks-shop');
const otherCluster = uniqueName('eks-other');
const namespace = uniqueName('eks-access');
const readers = `${cluster}-readers`;

/** The deps the reconcile handler builds (functions/core/environment.ts), with the caller's credentials. */
const deps = (
  identity: Pick<TestIdentity, 'accessKeyId' | 'secretAccessKey' | 'sessionToken'>,
  clock: Clock = systemClock,
): ClusterAccessDeps => ({
  eks: (r, credentials) => new EKSClient({ region: r, credentials }),
  sts: (r, credentials) => new STSClient({ region: r, credentials }),
  credentials: () => Promise.resolve(identity),
  clock,
});
const credentialsOf = ({ accessKeyId, secretAccessKey, sessionToken }: TestIdentity) => ({
  accessKeyId,
  secretAccessKey,
  sessionToken,
});

const whoAmI = async (kc: KubeConfig) =>
  (await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} })).status?.userInfo;
/** The HTTP status the API server answers a token with (200, or 401 refused). */
const statusWith = async (token: string): Promise<number> => {
  try {
    await whoAmI(kubeConfigFor({ server: bed.kube.server, caData: bed.kube.caData, token }));
    return 200;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
};
const tokenFor = async (identity: TestIdentity, clusterName = cluster, clock: Clock = systemClock) =>
  (await eksToken({ clusterName, region, credentials: credentialsOf(identity), clock })).token;
const urlOf = (token: string) => Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString('utf8');
const tokenOf = (url: string) => `k8s-aws-v1.${Buffer.from(url).toString('base64url')}`;
const minutesAgo = (minutes: number): Clock => ({
  now: () => new Date(Date.now() - minutes * 60_000),
  sleep: systemClock.sleep,
});

/** A token from a presigned URL signed by alice as the test says: the header, action and host it likes. */
const presign = async (hostname: string, query: Record<string, string>, headers: Record<string, string>) => {
  const signed = await new SignatureV4({
    service: 'sts',
    region,
    credentials: credentialsOf(TEST_IDENTITIES.alice),
    sha256: Sha256,
  }).presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query,
      headers: { host: hostname, ...headers },
    },
    { expiresIn: 60 },
  );
  const q = new URLSearchParams(signed.query as Record<string, string>).toString();
  return tokenOf(`https://${hostname}/?${q}`);
};
const gci = { Action: 'GetCallerIdentity', Version: '2011-06-15' };

beforeAll(async () => {
  const common = { endpoint: bed.kube.server, caData: bed.kube.caData, region };
  writeStandInEksCluster(bed.eks.clustersDir, cluster, {
    ...common,
    accessEntries: [
      // Identity Center people: the role of their permission set, as the console lists it (with its path).
      {
        principalArn:
          'arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Approver_0123456789abcdef',
        groups: [readers],
      },
      { principalArn: 'arn:aws:iam::123456789012:user/carol', username: 'carol-of-{{AccountID}}' },
    ],
  });
  // Another cluster: alice may use it too, but its tokens are not this API server's.
  writeStandInEksCluster(bed.eks.clustersDir, otherCluster, {
    endpoint: 'https://127.0.0.1:1',
    caData: bed.kube.caData,
    region,
    accessEntries: [
      {
        principalArn: 'arn:aws:iam::123456789012:role/AWSReservedSSO_Approver_0123456789abcdef',
        accessPolicies: ['AmazonEKSClusterAdminPolicy'],
      },
    ],
  });
  const admin = bed.kubeConfig();
  await createNamespace(admin, namespace);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'config-reader' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'config-readers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'config-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: readers }],
    },
  });
});

describe('{ eks: { name, region } } on the local components', () => {
  it('reaches the API server as the user the access entry maps an assumed role to, with its RBAC', async () => {
    const access = await connectToCluster({ eks: { name: cluster, region } }, deps(TEST_IDENTITIES.alice));
    expect(access.server).toBe(bed.kube.server);
    expect(access.token).toMatch(/^k8s-aws-v1\./);
    const kc = kubeConfigFor(access);
    const user = await whoAmI(kc);
    expect(user?.username).toBe(
      'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approver_0123456789abcdef/alice@example.com',
    );
    expect(user?.groups).toEqual(expect.arrayContaining([readers, 'system:authenticated']));
    expect(user?.groups).not.toContain('system:masters');
    expect(user?.extra?.canonicalArn).toEqual([
      'arn:aws:iam::123456789012:role/AWSReservedSSO_Approver_0123456789abcdef',
    ]);
    // The group's Role lets it read config maps in the namespace, and nothing more.
    const core = kc.makeApiClient(CoreV1Api);
    await expect(core.listNamespacedConfigMap({ namespace })).resolves.toBeDefined();
    await expect(
      core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'nope' } } }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(core.listNamespacedConfigMap({ namespace: 'default' })).rejects.toMatchObject({ code: 403 });
  });

  it('maps an IAM user by its entry, filling the user name template', async () => {
    const access = await connectToCluster({ eks: { name: cluster, region } }, deps(TEST_IDENTITIES.carol));
    const user = await whoAmI(kubeConfigFor(access));
    expect(user?.username).toBe('carol-of-123456789012');
  });

  it('lets the local key pair in as cluster admin on sluice-local (what componentsEnv gives a handler)', async () => {
    const local = { accessKeyId: 'local', secretAccessKey: 'local' };
    const access = await connectToCluster({ eks: { name: LOCAL_EKS_CLUSTER, region } }, deps(local));
    const user = await whoAmI(kubeConfigFor(access));
    expect(user?.username).toBe('arn:aws:iam::000000000000:user/local');
    expect(user?.groups).toContain('system:masters');
  });

  it('takes an access entry written while the API server runs, on the next token', async () => {
    const name = uniqueName('eks-late');
    writeStandInEksCluster(bed.eks.clustersDir, name, {
      endpoint: bed.kube.server,
      caData: bed.kube.caData,
      region,
    });
    expect(await statusWith(await tokenFor(TEST_IDENTITIES.ci, name))).toBe(401);
    putStandInAccessEntry(bed.eks.clustersDir, name, {
      principalArn: 'arn:aws:iam::123456789012:role/ci-pusher',
      username: 'ci:{{SessionName}}',
    });
    const access = await connectToCluster({ eks: { name, region } }, deps(TEST_IDENTITIES.ci));
    expect((await whoAmI(kubeConfigFor(access)))?.username).toBe('ci:github-actions');
  });

  it('keeps static tokens working exactly as before', async () => {
    expect((await whoAmI(bed.kubeConfig()))?.username).toBe('sluice-admin');
    const restricted = kubeConfigFor({
      server: bed.kube.server,
      caData: bed.kube.caData,
      token: bed.kube.restrictedToken,
    });
    expect((await whoAmI(restricted))?.username).toBe('sluice-restricted');
  });

  it('accepts a token 14 minutes old (STS honours 15 minutes, whatever X-Amz-Expires says)', async () => {
    expect(await statusWith(await tokenFor(TEST_IDENTITIES.alice, cluster, minutesAgo(14)))).toBe(200);
  });
});

describe('tokens the API server refuses (401)', () => {
  it('a token for another cluster name', async () => {
    expect(await statusWith(await tokenFor(TEST_IDENTITIES.alice, otherCluster))).toBe(401);
    expect(await statusWith(await tokenFor(TEST_IDENTITIES.alice, uniqueName('eks-unknown')))).toBe(401);
  });

  it('an expired token (signed 16 minutes ago)', async () => {
    expect(await statusWith(await tokenFor(TEST_IDENTITIES.alice, cluster, minutesAgo(16)))).toBe(401);
  });

  it('a tampered signature, and a token whose URL was changed after signing', async () => {
    const url = urlOf(await tokenFor(TEST_IDENTITIES.alice));
    const tampered = url.replace(
      /X-Amz-Signature=([0-9a-f])/,
      (_, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`,
    );
    expect(tampered).not.toBe(url);
    expect(await statusWith(tokenOf(tampered))).toBe(401);
    const otherKey = url.replace(
      /X-Amz-Credential=[^%]+/,
      `X-Amz-Credential=${TEST_IDENTITIES.bob.accessKeyId}`,
    );
    expect(await statusWith(tokenOf(otherKey))).toBe(401);
  });

  it('an identity with no access entry on the cluster', async () => {
    expect(await statusWith(await tokenFor(TEST_IDENTITIES.mallory))).toBe(401);
    await expect(
      connectToCluster({ eks: { name: cluster, region } }, deps(TEST_IDENTITIES.mallory)).then((a) =>
        whoAmI(kubeConfigFor(a)),
      ),
    ).rejects.toMatchObject({ code: 401 });
  });

  it('a token signed by an unknown key', async () => {
    const unknown = {
      accessKeyId: 'AKIAUNKNOWNEXAMPLE01',
      secretAccessKey: 'not-a-known-secret-0000000000000000000000',
      arn: 'x',
    };
    expect(await statusWith(await tokenFor(unknown))).toBe(401);
  });

  it('a presigned URL that does not sign x-k8s-aws-id, or is not STS GetCallerIdentity', async () => {
    // The same signature, but not bound to a cluster: a token from another service's presigned URL.
    expect(await statusWith(await presign('sts.us-east-1.amazonaws.com', gci, {}))).toBe(401);
    // Bound to the cluster, but another action, or a host that is not STS.
    const bound = { 'x-k8s-aws-id': cluster };
    expect(
      await statusWith(
        await presign('sts.us-east-1.amazonaws.com', { ...gci, Action: 'GetSessionToken' }, bound),
      ),
    ).toBe(401);
    expect(await statusWith(await presign('sts.us-east-1.amazonaws.com.evil.example', gci, bound))).toBe(401);
    // The control: the same construction with everything right is accepted.
    expect(await statusWith(await presign('sts.us-east-1.amazonaws.com', gci, bound))).toBe(200);
  });
});

describe('the review on plain values (one cluster on the API server, so no other name can answer)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-eks-review-'));
  const server = 'https://127.0.0.1:6443';
  writeStandInEksCluster(dir, 'only', {
    endpoint: server,
    caData: bed.kube.caData,
    region,
    accessEntries: [
      {
        principalArn: 'arn:aws:iam::123456789012:role/AWSReservedSSO_Approver_0123456789abcdef',
        groups: ['readers'],
      },
    ],
  });
  const review = (token: string) =>
    reviewEksToken(token, server, { clustersDir: dir, identities: Object.values(TEST_IDENTITIES) });

  it('maps a token bound to the cluster, and refuses the same token not bound to it', async () => {
    expect(
      review(await presign('sts.us-east-1.amazonaws.com', gci, { 'x-k8s-aws-id': 'only' })),
    ).toMatchObject({
      cluster: 'only',
      user: { groups: ['readers'] },
    });
    expect(review(await presign('sts.us-east-1.amazonaws.com', gci, {}))).toEqual({
      error: 'the x-k8s-aws-id header is not signed in the presigned URL',
    });
  });

  it('refuses extra query parameters and a signature scoped to another region than the host', async () => {
    const bound = { 'x-k8s-aws-id': 'only' };
    expect(review(await presign('sts.us-east-1.amazonaws.com', { ...gci, Extra: '1' }, bound))).toEqual({
      error: 'query parameter "Extra" is not allowed',
    });
    expect(review(await presign('sts.eu-west-1.amazonaws.com', gci, bound))).toMatchObject({
      error: expect.stringMatching(/not scoped to sts in eu-west-1/),
    });
  });
});
