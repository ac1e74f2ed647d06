import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startDaemon, waitUntilReady } from './processes.ts';

/** The account and region the local KMS names its keys in (key ARNs are fixed by them and the seed). */
export const LOCAL_KMS_ACCOUNT = '000000000000';
export const LOCAL_KMS_REGION = 'us-east-1';
/** The seeded test keys (dev/local-kms-seed.yaml). */
export const LOCAL_KMS_KEYS = {
  /** The key the committed SOPS fixtures are encrypted with. */
  fixtures: `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/5f0c7b1e-7d3a-4c59-9a57-1d0b6c3e2a10`,
  /** A second key, for files encrypted with a key a delivery does not name. */
  other: `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/0d6a9e42-31c8-4f1b-8b2e-6a7c5d3f1e90`,
  /** ECC_NIST_P256, SIGN_VERIFY: signed the cosign fixture test/fixtures/cosign-kms. */
  cosignEcc: `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/0af3f91f-d3f1-4669-a248-c1d4672989b8`,
  /** RSA_2048, SIGN_VERIFY: signed the cosign fixture too (a second signature). */
  cosignRsa: `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/0a3d6cbb-7988-4365-b12d-3130f019fee5`,
  /** ECC_NIST_P256, SIGN_VERIFY: signed nothing (a signing key a delivery names that did not sign). */
  otherSigner: `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/72de6daf-8a59-4612-b61a-0771242d9085`,
  /** RSA_2048, ENCRYPT_DECRYPT: a key with a public half that is not for signing. */
  rsaEncryption: `arn:aws:kms:${LOCAL_KMS_REGION}:${LOCAL_KMS_ACCOUNT}:key/007483a0-42e9-48da-b59b-395070de496a`,
} as const;

const SEED = join(dirname(fileURLToPath(import.meta.url)), 'local-kms-seed.yaml');

/** Starts local-kms on 127.0.0.1 with the seeded test keys and its data in `dir`. */
export async function startLocalKms(binary: string, dir: string): Promise<{ pid: number; endpoint: string }> {
  const port = await freePort();
  const log = join(dir, 'local-kms.log');
  const pid = startDaemon(binary, [`127.0.0.1:${port}`], log, {
    env: {
      KMS_ACCOUNT_ID: LOCAL_KMS_ACCOUNT,
      KMS_REGION: LOCAL_KMS_REGION,
      KMS_DATA_PATH: join(dir, 'kms-data'),
      KMS_SEED_PATH: SEED,
    },
  });
  const endpoint = `http://127.0.0.1:${port}`;
  // Any answer (an error, to a request without an operation) means it is up.
  await waitUntilReady({
    name: 'local-kms',
    pid,
    logFile: log,
    ready: async () => (await fetch(endpoint, { method: 'POST' })).status > 0,
  });
  return { pid, endpoint };
}
