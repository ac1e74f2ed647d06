import type { Decryptor } from '../manifests/encrypted.ts';

/**
 * A Decryptor that loads the real one on first use, so a run without encrypted documents never
 * loads the KMS, Secrets Manager and age code (a chunk of its own in the Lambda bundle).
 */
export function lazyDecryptor(load: () => Promise<Decryptor>): Decryptor {
  let loading: Promise<Decryptor> | undefined;
  return {
    async decrypt(request) {
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return (await loading).decrypt(request);
    },
  };
}
