// The EKS DescribeCluster stand-in, in the running components, through @aws-sdk/client-eks reaching
// it by AWS_ENDPOINT_URL_EKS (as the CLI and the handler bundles do): answered only to a signature
// that holds, for clusters in its folder, in the signature's region.
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { describe, expect, it } from 'vitest';
import { LOCAL_EKS_CLUSTER } from '../../dev/components.ts';
import { writeStandInEksCluster } from '../../dev/eks-clusters.ts';
import { TEST_IDENTITIES } from '../../dev/sigv4-identity.ts';
import { testbed, uniqueName } from '../support/testbed.ts';

const bed = testbed();
const eks = (
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  region = 'us-east-1',
) => new EKSClient({ region, credentials, maxAttempts: 1 });

describe('the EKS DescribeCluster stand-in', () => {
  it('answers with the local API server: ACTIVE, its endpoint and CA, an EKS ARN', async () => {
    const { cluster } = await eks(TEST_IDENTITIES.carol).send(
      new DescribeClusterCommand({ name: LOCAL_EKS_CLUSTER }),
    );
    expect(cluster).toMatchObject({
      name: LOCAL_EKS_CLUSTER,
      arn: `arn:aws:eks:us-east-1:000000000000:cluster/${LOCAL_EKS_CLUSTER}`,
      status: 'ACTIVE',
      endpoint: bed.kube.server,
      certificateAuthority: { data: bed.kube.caData },
      accessConfig: { authenticationMode: 'API' },
    });
    expect(cluster!.createdAt).toBeInstanceOf(Date);
  });

  it('answers a second name of the same API server, and a cluster as its file says it (status)', async () => {
    const name = uniqueName('eks-creating');
    writeStandInEksCluster(bed.eks.clustersDir, name, {
      endpoint: bed.kube.server,
      caData: bed.kube.caData,
      region: 'us-east-1',
      status: 'CREATING',
    });
    const { cluster } = await eks(TEST_IDENTITIES.alice).send(new DescribeClusterCommand({ name }));
    expect(cluster).toMatchObject({ name, status: 'CREATING', endpoint: bed.kube.server });
  });

  it('says ResourceNotFoundException for an unknown name, and for a known name in another region', async () => {
    await expect(
      eks(TEST_IDENTITIES.carol).send(new DescribeClusterCommand({ name: 'no-such-cluster' })),
    ).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: 'No cluster found for name: no-such-cluster.',
      $metadata: { httpStatusCode: 404 },
    });
    await expect(
      eks(TEST_IDENTITIES.carol, 'eu-west-1').send(new DescribeClusterCommand({ name: LOCAL_EKS_CLUSTER })),
    ).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: `No cluster found for name: ${LOCAL_EKS_CLUSTER}.`,
    });
  });

  it('refuses an unsigned request with 403', async () => {
    const response = await fetch(`${bed.eks.endpoint}/clusters/${LOCAL_EKS_CLUSTER}`);
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
    expect(JSON.stringify(await response.json())).not.toContain(bed.kube.server);
  });

  it('refuses with 403 a signature made with the wrong secret, an unknown key, a missing session token', async () => {
    const refusals = [
      [
        { accessKeyId: TEST_IDENTITIES.carol.accessKeyId, secretAccessKey: 'not-carols-secret' },
        'InvalidSignatureException',
      ],
      [{ accessKeyId: 'AKIAUNKNOWNEXAMPLE01', secretAccessKey: 'whatever' }, 'UnrecognizedClientException'],
      [
        {
          accessKeyId: TEST_IDENTITIES.alice.accessKeyId,
          secretAccessKey: TEST_IDENTITIES.alice.secretAccessKey,
        },
        'UnrecognizedClientException',
      ],
    ] as const;
    for (const [credentials, name] of refusals)
      await expect(
        eks(credentials).send(new DescribeClusterCommand({ name: LOCAL_EKS_CLUSTER })),
      ).rejects.toMatchObject({ name, $metadata: { httpStatusCode: 403 } });
  });
});
