// What a sops-encrypted value looks like: the one part of sops the build knows without loading the
// decryptor (to refuse or name encrypted documents).

/** `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`: one value as sops encrypts it. */
export const ENCRYPTED_VALUE = /^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]/;

export const isEncryptedValue = (value: unknown): value is string =>
  typeof value === 'string' && ENCRYPTED_VALUE.test(value);
