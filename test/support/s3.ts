// The S3 stand-in (dev/s3-endpoint.ts) for live calendar tests: the identity the functions sign
// as, the stand-in on a free local port, and an S3 client signing as someone.
import { S3Client } from '@aws-sdk/client-s3';
import { listenS3, type S3Endpoint } from '../../dev/s3-endpoint.ts';
import type { TestIdentity } from '../../dev/sigv4-identity.ts';

/** The reconcile and gate functions' role, as S3 would verify it. */
export const FUNCTION_IDENTITY: TestIdentity = {
  accessKeyId: 'ASIAFUNCTIONS3XXXXXX',
  secretAccessKey: 'secret-of-the-functions-role-0000000000',
  sessionToken: 'session-token-of-sluice-deployer',
  arn: 'arn:aws:sts::000000000000:assumed-role/sluice-deployer/reconcile',
};

/** An S3 client of `endpoint` signing as `who`. */
export const s3Client = (endpoint: string, who: TestIdentity): S3Client =>
  new S3Client({
    endpoint,
    region: 'us-east-1',
    credentials: {
      accessKeyId: who.accessKeyId,
      secretAccessKey: who.secretAccessKey,
      ...(who.sessionToken !== undefined && { sessionToken: who.sessionToken }),
    },
  });

export interface S3StandIn {
  readonly s3: S3Endpoint;
  readonly endpoint: string;
  close(): Promise<void>;
}

/** The stand-in on 127.0.0.1, knowing `identities` (the functions' by default). */
export async function startS3StandIn(
  identities: readonly TestIdentity[] = [FUNCTION_IDENTITY],
): Promise<S3StandIn> {
  const { s3, endpoint } = await listenS3({ identities });
  return {
    s3,
    endpoint,
    close: () =>
      new Promise<void>((done) => {
        s3.server.closeAllConnections();
        s3.server.close(() => done());
      }),
  };
}
