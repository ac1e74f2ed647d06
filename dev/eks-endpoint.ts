// A stand-in for EKS's DescribeCluster, the one EKS call the engine makes (functions/core/kube/
// cluster-access.ts): REST JSON, `GET /clusters/{name}`, as @aws-sdk/client-eks speaks it. The
// clusters are the local API servers recorded in a folder (dev/eks-clusters.ts).
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readStandInEksCluster } from './eks-clusters.ts';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

export interface EksEndpointOptions {
  /** Where the clusters are (writeStandInEksCluster); read on every request. */
  readonly clustersDir: string;
  /** Whose signatures hold (dev/sigv4-identity.ts). */
  readonly identities: readonly TestIdentity[];
  readonly account: string;
}

/** True for a request of the EKS API: its path or its signature's credential scope says so. */
export function isEksRequest(request: IncomingMessage): boolean {
  return (
    /^\/clusters(\/|\?|$)/.test(request.url ?? '') ||
    /\/eks\/aws4_request/.test(String(request.headers.authorization ?? ''))
  );
}

/** How EKS (a REST JSON service) names the signature errors verifySigV4 reports in the query protocol's words. */
const SIGNATURE_ERRORS: Record<string, string> = {
  MissingAuthenticationToken: 'MissingAuthenticationTokenException',
  InvalidClientTokenId: 'UnrecognizedClientException',
  ExpiredToken: 'ExpiredTokenException',
};

/**
 * DescribeCluster, answering only a request whose Signature Version 4 holds for one of
 * `identities`, signed for `eks`: the cluster of that name in the signature's region (ACTIVE, its
 * endpoint and CA), or ResourceNotFoundException "No cluster found for name: <name>." as EKS says
 * it. Any other operation is refused. It evaluates no IAM policy.
 */
export function handleEksRequest(
  options: EksEndpointOptions,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const reply = (status: number, json: unknown, errorType?: string) =>
      response
        .writeHead(status, {
          'content-type': 'application/json',
          'x-amzn-requestid': randomUUID(),
          ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
        })
        .end(JSON.stringify(json));
    const fail = (status: number, type: string, message: string, extra: object = {}) =>
      reply(status, { message, ...extra }, type);
    const url = request.url ?? '/';
    const verified = verifySigV4(
      { method: request.method ?? 'GET', url, headers: request.headers, body },
      options.identities,
      new Date(),
    );
    if ('error' in verified)
      return fail(403, SIGNATURE_ERRORS[verified.code] ?? 'InvalidSignatureException', verified.error);
    if (verified.service !== 'eks')
      return fail(403, 'InvalidSignatureException', `signed for ${verified.service}, not eks`);
    const match = /^\/clusters\/([^/?]+)$/.exec(url.split('?')[0] ?? '');
    if (request.method !== 'GET' || !match)
      return fail(
        400,
        'InvalidRequestException',
        `the EKS stand-in answers DescribeCluster (GET /clusters/{name}) only, not ${request.method} ${url}`,
      );
    const name = decodeURIComponent(match[1]!);
    const cluster = readStandInEksCluster(options.clustersDir, name);
    if (!cluster || cluster.region !== verified.region)
      return fail(404, 'ResourceNotFoundException', `No cluster found for name: ${name}.`, {
        clusterName: name,
      });
    const id = createHash('sha256')
      .update(`${verified.region}/${name}`)
      .digest('hex')
      .slice(0, 32)
      .toUpperCase();
    reply(200, {
      cluster: {
        name,
        arn: `arn:aws:eks:${verified.region}:${options.account}:cluster/${name}`,
        createdAt: Date.parse('2026-01-01T00:00:00Z') / 1000,
        version: '1.33',
        endpoint: cluster.endpoint,
        roleArn: `arn:aws:iam::${options.account}:role/eks-cluster-role`,
        resourcesVpcConfig: { endpointPublicAccess: true, endpointPrivateAccess: false },
        kubernetesNetworkConfig: { ipFamily: 'ipv4' },
        identity: { oidc: { issuer: `https://oidc.eks.${verified.region}.amazonaws.com/id/${id}` } },
        status: cluster.status ?? 'ACTIVE',
        certificateAuthority: { data: cluster.caData },
        platformVersion: 'eks.1',
        accessConfig: { authenticationMode: 'API' },
        tags: {},
      },
    });
  });
}
