import { GetPublicKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import type { GetKmsPublicKey } from '../oci/kms-public-keys.ts';

/** The Region of a KMS key ARN (`arn:<partition>:kms:<region>:…`). */
const regionOf = (keyArn: string): string => keyArn.split(':')[3] ?? '';

/**
 * kms:GetPublicKey, asked in the key's own Region (GetPublicKey is regional: a key of another
 * Region is found only there), with one client per Region made by `clientFor` (by default the
 * SDK's, reaching AWS_ENDPOINT_URL_KMS locally).
 */
export function kmsGetPublicKey(
  clientFor: (region: string) => KMSClient = (region) => new KMSClient({ region }),
): GetKmsPublicKey {
  const clients = new Map<string, KMSClient>();
  return async (keyArn) => {
    const region = regionOf(keyArn);
    let client = clients.get(region);
    if (!client) clients.set(region, (client = clientFor(region)));
    const answer = await client.send(new GetPublicKeyCommand({ KeyId: keyArn }));
    return {
      keyId: answer.KeyId,
      keyUsage: answer.KeyUsage,
      keySpec: answer.KeySpec,
      signingAlgorithms: answer.SigningAlgorithms,
      publicKey: answer.PublicKey,
    };
  };
}
