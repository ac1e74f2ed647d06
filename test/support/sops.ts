import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_KMS_KEYS } from '../../dev/local-kms.ts';
import { uniqueName } from './testbed.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'sops');

/** A file of test/fixtures/sops as the sops CLI wrote it. */
export const sopsFixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

/**
 * A Secrets Manager secret (on the local endpoint, through AWS_ENDPOINT_URL_SECRETS_MANAGER) holding
 * `text`, by default the test-only age identity the fixtures are encrypted for; returns its ARN.
 */
export async function ageKeySecret(text = sopsFixture('age.key')): Promise<string> {
  const created = await new SecretsManagerClient({}).send(
    new CreateSecretCommand({ Name: uniqueName('sops-age'), SecretString: text }),
  );
  return created.ARN!;
}

/** `decryption` for a delivery: the fixtures' KMS key and, given, the age identity secret. */
export const sopsDecryption = (ageKeySecretArn?: string, kmsKeyArns = [LOCAL_KMS_KEYS.fixtures]) => ({
  provider: 'sops',
  kmsKeyArns,
  ...(ageKeySecretArn && { ageKeySecretArn }),
});
