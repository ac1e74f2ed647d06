import type { Decryption, Delivery } from '../config/index.ts';
import { isRecord } from '../config/issues.ts';
import { SluiceError } from '../errors.ts';
import type { Taint } from '../taint.ts';
import { isEncryptedValue } from './sops-format.ts';
import { describeObject, type Manifest } from './objects.ts';

/** What a Decryptor is asked: the built objects, the artifact's files they came from, the delivery's keys. */
export interface DecryptRequest {
  readonly manifests: readonly Manifest[];
  readonly files: ReadonlyMap<string, Buffer>;
  readonly decryption: Decryption;
  /** The delivery's `targetNamespace`: where a decrypted Secret lands, as prepareObjects settles it. */
  readonly targetNamespace?: string;
  /** Told every decrypted value, for the run to scrub from what it writes out. */
  readonly taint?: Taint;
}

/** Decrypts the SOPS-encrypted objects of a build, in memory; fails naming the file and object. */
export interface Decryptor {
  decrypt(request: DecryptRequest): Promise<Manifest[]>;
}

/** A document sops encrypted: it carries a top-level `sops` mapping. */
export const isSopsEncrypted = (manifest: Manifest): boolean => isRecord(manifest.object.sops);

/** `Secret/ns/name`, or `an encrypted document` when its kind or name is itself encrypted. */
export function describeDocument(manifest: Manifest): string {
  const { kind, metadata } = manifest.object;
  return isEncryptedValue(kind) || isEncryptedValue(metadata?.name) || isEncryptedValue(metadata?.namespace)
    ? 'an encrypted document'
    : describeObject(manifest.object);
}

/**
 * The build's objects with its SOPS-encrypted ones decrypted by `decryptor` (loaded only when
 * there are any). An encrypted object in a delivery without `decryption` fails the build: it would
 * otherwise be applied with its ciphertext.
 */
export interface DecryptOptions {
  /** The artifact's files, by path: what the objects were built from. */
  readonly files: ReadonlyMap<string, Buffer>;
  readonly delivery: Delivery;
  readonly decryptor: Decryptor | undefined;
  readonly taint?: Taint;
}

export async function decryptEncrypted(
  built: Manifest[],
  { files, delivery, decryptor, taint }: DecryptOptions,
): Promise<Manifest[]> {
  const encrypted = built.filter(isSopsEncrypted);
  if (encrypted.length === 0) return built;
  if (!delivery.decryption) {
    const first = encrypted[0]!;
    const more = encrypted.length > 1 ? ` (and ${encrypted.length - 1} more)` : '';
    throw new SluiceError(
      'BuildFailed',
      `${first.origin}: ${describeDocument(first)} is SOPS-encrypted${more}, but delivery '${delivery.name}' has no decryption: set decryption: { provider: sops, kmsKeyArns: [...] } or ageKeySecretArn`,
    );
  }
  if (!decryptor)
    throw new SluiceError(
      'BuildFailed',
      `delivery '${delivery.name}' has decryption, but this run has no decryptor`,
    );
  return decryptor.decrypt({
    manifests: built,
    files,
    decryption: delivery.decryption,
    targetNamespace: delivery.targetNamespace,
    taint,
  });
}
