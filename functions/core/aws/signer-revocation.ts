import { GetRevocationStatusCommand, SignerClient } from '@aws-sdk/client-signer';
import type { GetRevocationStatus } from '../oci/notation-aws-signer.ts';

/** The Region of a signing profile version ARN (`arn:<partition>:signer:<region>:…`). */
const regionOf = (arn: string): string => arn.split(':')[3] ?? '';

/**
 * signer:GetRevocationStatus, asked in the signing profile's own Region (signatures are
 * regional, and AWS Signer refuses a cross-partition one), with one client per Region made by
 * `clientFor` (by default the SDK's, reaching AWS_ENDPOINT_URL_SIGNER locally).
 */
export function signerGetRevocationStatus(
  clientFor: (region: string) => SignerClient = (region) => new SignerClient({ region }),
): GetRevocationStatus {
  const clients = new Map<string, SignerClient>();
  return async (query) => {
    const region = regionOf(query.profileVersionArn);
    let client = clients.get(region);
    if (!client) clients.set(region, (client = clientFor(region)));
    const answer = await client.send(
      new GetRevocationStatusCommand({
        signatureTimestamp: query.signatureTimestamp,
        platformId: query.platformId,
        profileVersionArn: query.profileVersionArn,
        jobArn: query.jobArn,
        certificateHashes: [...query.certificateHashes],
      }),
    );
    return { revokedEntities: answer.revokedEntities ?? [] };
  };
}
