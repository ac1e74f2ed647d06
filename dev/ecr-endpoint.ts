import { createServer, type Server } from 'node:http';
import { jsonProtocol } from './aws-json.ts';

/** What the local ECR API fronts: a real OCI registry and the basic-auth credentials it accepts. */
export interface EcrEndpointOptions {
  /** e.g. http://127.0.0.1:5000 */
  readonly registryUrl: string;
  readonly username: string;
  readonly password: string;
  /** @default '000000000000' */
  readonly registryId?: string;
  /** How long an authorization token is said to last. @default 12 hours */
  readonly tokenLifetimeMs?: number;
  /** Fault injection for tests. @default none */
  readonly faults?: EcrFaults;
}

/** An error answer of the ECR API, e.g. `{ status: 400, type: 'AccessDeniedException', message }`. */
export interface EcrFault {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

export interface EcrFaults {
  /** The error to answer an operation (`GetAuthorizationToken`, `DescribeImages`) with, if any. */
  readonly error?: (operation: string) => EcrFault | undefined;
  /** The base64 `authorizationToken` to hand out instead of the registry's real credentials, if any. */
  readonly token?: () => string | undefined;
}

const TARGET_PREFIX = 'AmazonEC2ContainerRegistry_V20150921.';
const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ');

class EcrError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

interface ImageId {
  imageTag?: string;
  imageDigest?: string;
}

/**
 * A small server for the ECR JSON 1.1 protocol (`GetAuthorizationToken`, `DescribeImages`) in
 * front of a real registry, so `@aws-sdk/client-ecr` is exercised over the wire locally.
 * Request signatures are not checked: DynamoDB Local does not check them either.
 */
export function createEcrEndpoint(options: EcrEndpointOptions): Server {
  const registryId = options.registryId ?? '000000000000';
  const basic = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  const registryFetch = (path: string, init: RequestInit = {}) =>
    fetch(`${options.registryUrl}${path}`, {
      ...init,
      headers: { authorization: basic, accept: MANIFEST_ACCEPT, ...(init.headers as Record<string, string>) },
    });

  async function describeImage(repositoryName: string, id: ImageId) {
    const reference = id.imageDigest ?? id.imageTag;
    const response = await registryFetch(`/v2/${repositoryName}/manifests/${reference}`);
    if (response.status === 404) return undefined;
    if (!response.ok)
      throw new EcrError(
        'ServerException',
        `registry answered ${response.status} for ${repositoryName}:${reference}`,
      );
    const body = await response.text();
    const manifest = JSON.parse(body) as {
      mediaType?: string;
      config?: { mediaType?: string };
      layers?: { size: number }[];
    };
    return {
      registryId,
      repositoryName,
      imageDigest: response.headers.get('docker-content-digest'),
      imageTags: id.imageTag ? [id.imageTag] : [],
      imageSizeInBytes: (manifest.layers ?? []).reduce((sum, layer) => sum + layer.size, 0),
      imagePushedAt: Date.now() / 1000,
      imageManifestMediaType: manifest.mediaType ?? response.headers.get('content-type'),
      artifactMediaType: manifest.config?.mediaType,
    };
  }

  const handlers: Record<string, (input: Record<string, unknown>) => Promise<unknown>> = {
    async GetAuthorizationToken() {
      return {
        authorizationData: [
          {
            authorizationToken:
              options.faults?.token?.() ??
              Buffer.from(`${options.username}:${options.password}`).toString('base64'),
            expiresAt: (Date.now() + (options.tokenLifetimeMs ?? 12 * 3600_000)) / 1000,
            proxyEndpoint: options.registryUrl,
          },
        ],
      };
    },
    async DescribeImages(input) {
      const repositoryName = String(input.repositoryName ?? '');
      if (!repositoryName) throw new EcrError('InvalidParameterException', 'repositoryName is required');
      const tags = await registryFetch(`/v2/${repositoryName}/tags/list`);
      if (tags.status === 404) {
        throw new EcrError(
          'RepositoryNotFoundException',
          `The repository with name '${repositoryName}' does not exist in the registry with id '${registryId}'`,
        );
      }
      const requested =
        (input.imageIds as ImageId[] | undefined) ??
        (((await tags.json()) as { tags?: string[] }).tags ?? []).map((imageTag): ImageId => ({ imageTag }));
      const imageDetails = [];
      for (const id of requested) {
        const detail = await describeImage(repositoryName, id);
        if (!detail) {
          throw new EcrError(
            'ImageNotFoundException',
            `The image with imageId {imageDigest:'${id.imageDigest ?? 'null'}', imageTag:'${id.imageTag ?? 'null'}'} does not exist within the repository with name '${repositoryName}'`,
          );
        }
        imageDetails.push(detail);
      }
      return { imageDetails };
    },
  };

  return createServer(
    jsonProtocol(TARGET_PREFIX, ({ body, target, operation, reply }) => {
      const handler = operation === undefined ? undefined : handlers[operation];
      const fault = handler && options.faults?.error?.(operation!);
      if (fault) {
        reply(fault.status, { __type: fault.type, message: fault.message }, fault.type);
        return;
      }
      if (!handler) {
        reply(
          400,
          {
            __type: 'UnknownOperationException',
            message: `operation ${target || '(none)'} is not served locally`,
          },
          'UnknownOperationException',
        );
        return;
      }
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        reply(
          400,
          { __type: 'SerializationException', message: 'request body is not JSON' },
          'SerializationException',
        );
        return;
      }
      handler(input).then(
        (output) => reply(200, output),
        (error: unknown) => {
          const type = error instanceof EcrError ? error.type : 'ServerException';
          reply(
            error instanceof EcrError ? 400 : 500,
            { __type: type, message: (error as Error).message },
            type,
          );
        },
      );
    }),
  );
}
