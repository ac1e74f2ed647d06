import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Decryptor } from '../manifests/encrypted.ts';
import type { SopsKeys } from './data-key.ts';
import { sopsDecryptor } from './decrypt.ts';

/** The region of an ARN (`arn:aws:kms:<region>:…`). */
const regionOf = (arn: string): string => arn.split(':')[3] ?? '';

/** Per region, one client made by `make`. */
function perRegion<T>(make: (region: string) => T): (region: string) => T {
  const clients = new Map<string, T>();
  return (region) => {
    let client = clients.get(region);
    if (!client) clients.set(region, (client = make(region)));
    return client;
  };
}

/** The age identities in a key file's text: `AGE-SECRET-KEY-1…` lines; blank lines and `#` comments skipped. */
export function ageIdentitiesIn(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * SopsKeys on AWS: KMS Decrypt in the key's region (with the file's encryption context), age
 * identities from a Secrets Manager secret (read once per decryptor). Clients come from `clients`;
 * by default the SDK's, reaching AWS_ENDPOINT_URL_KMS / AWS_ENDPOINT_URL_SECRETS_MANAGER locally.
 */
export function awsSopsKeys(
  clients: {
    readonly kms?: (region: string) => KMSClient;
    readonly secretsManager?: (region: string) => SecretsManagerClient;
  } = {},
): SopsKeys {
  const kms = perRegion(clients.kms ?? ((region) => new KMSClient({ region })));
  const secretsManager = perRegion(
    clients.secretsManager ?? ((region) => new SecretsManagerClient({ region })),
  );
  const identities = new Map<string, Promise<readonly string[]>>();
  return {
    async kmsDecrypt({ keyArn, ciphertext, context }) {
      const output = await kms(regionOf(keyArn)).send(
        new DecryptCommand({
          KeyId: keyArn,
          CiphertextBlob: ciphertext,
          ...(Object.keys(context).length > 0 && { EncryptionContext: { ...context } }),
        }),
      );
      if (!output.Plaintext) throw new Error('KMS returned no plaintext');
      return Buffer.from(output.Plaintext);
    },
    ageIdentities(secretArn) {
      let loaded = identities.get(secretArn);
      if (!loaded) {
        loaded = secretsManager(regionOf(secretArn))
          .send(new GetSecretValueCommand({ SecretId: secretArn }))
          .then((secret) => {
            const found = ageIdentitiesIn(secret.SecretString ?? '');
            if (found.length === 0) throw new Error('the secret holds no age identity (AGE-SECRET-KEY-1…)');
            return found;
          });
        identities.set(secretArn, loaded);
      }
      return loaded;
    },
  };
}

/** The sops Decryptor with AWS keys, as the composition root loads it. */
export function awsSopsDecryptor(): Decryptor {
  return sopsDecryptor(awsSopsKeys());
}
