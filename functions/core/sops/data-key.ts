import { armor, Decrypter } from 'age-encryption';
import type { Decryption } from '../config/index.ts';
import type { SopsMetadata } from './metadata.ts';

/** The length of a sops data key (AES-256). */
const DATA_KEY_BYTES = 32;

/** What opens a data key: KMS and the age identities, passed in (the AWS clients live at the composition root). */
export interface SopsKeys {
  /** KMS Decrypt of `ciphertext` with the key `keyArn` under `context`: the plaintext data key. */
  readonly kmsDecrypt: (request: {
    readonly keyArn: string;
    readonly ciphertext: Buffer;
    readonly context: Readonly<Record<string, string>>;
  }) => Promise<Buffer>;
  /** The age identities (`AGE-SECRET-KEY-1…`) stored in the secret `secretArn`. */
  readonly ageIdentities: (secretArn: string) => Promise<readonly string[]>;
}

/** No key the delivery names opens the data key; the message says which were tried and why. */
export class DataKeyError extends Error {
  override readonly name = 'DataKeyError';
}

const why = (error: unknown): string => {
  const { name, message } = error as Error;
  return name && name !== 'Error' && !message.startsWith(name) ? `${name}: ${message}` : message;
};

async function fromKms(metadata: SopsMetadata, decryption: Decryption, keys: SopsKeys, tried: string[]) {
  for (const entry of metadata.kms) {
    if (!decryption.kmsKeyArns.includes(entry.arn)) continue;
    try {
      const key = await keys.kmsDecrypt({
        keyArn: entry.arn,
        ciphertext: Buffer.from(entry.enc, 'base64'),
        context: entry.context,
      });
      if (key.length === DATA_KEY_BYTES) return key;
      tried.push(
        `KMS key ${entry.arn}: decrypted to ${key.length} bytes, not a ${DATA_KEY_BYTES}-byte data key`,
      );
    } catch (error) {
      tried.push(`KMS key ${entry.arn}: ${why(error)}`);
    }
  }
  return undefined;
}

async function fromAge(metadata: SopsMetadata, decryption: Decryption, keys: SopsKeys, tried: string[]) {
  if (metadata.age.length === 0 || decryption.ageKeySecretArn === undefined) return undefined;
  let identities: readonly string[];
  try {
    identities = await keys.ageIdentities(decryption.ageKeySecretArn);
  } catch (error) {
    tried.push(`age identities from ${decryption.ageKeySecretArn}: ${why(error)}`);
    return undefined;
  }
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  for (const entry of metadata.age) {
    try {
      const key = Buffer.from(await decrypter.decrypt(armor.decode(entry.enc)));
      if (key.length === DATA_KEY_BYTES) return key;
      tried.push(`age recipient ${entry.recipient}: decrypted to ${key.length} bytes, not a data key`);
    } catch (error) {
      tried.push(`age recipient ${entry.recipient}: ${why(error)}`);
    }
  }
  return undefined;
}

/**
 * The file's data key, opened by the first key that both the file and the delivery's `decryption`
 * name: KMS keys first (each only if listed in kmsKeyArns), then the age identities.
 */
export async function openDataKey(
  metadata: SopsMetadata,
  decryption: Decryption,
  keys: SopsKeys,
): Promise<Buffer> {
  const tried: string[] = [];
  const key =
    (await fromKms(metadata, decryption, keys, tried)) ?? (await fromAge(metadata, decryption, keys, tried));
  if (key) return key;
  if (tried.length > 0) throw new DataKeyError(`no key opens its data key (${tried.join('; ')})`);
  const fileKeys = [
    ...metadata.kms.map((entry) => `KMS key ${entry.arn}`),
    ...metadata.age.map((entry) => `age recipient ${entry.recipient}`),
  ];
  const configured = [
    `kmsKeyArns [${decryption.kmsKeyArns.join(', ')}]`,
    decryption.ageKeySecretArn ? `ageKeySecretArn ${decryption.ageKeySecretArn}` : 'no ageKeySecretArn',
  ];
  throw new DataKeyError(
    `it is encrypted for ${fileKeys.join(', ')}, none of which the delivery's decryption names (${configured.join(', ')})`,
  );
}
