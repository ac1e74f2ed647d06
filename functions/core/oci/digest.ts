import { createHash } from 'node:crypto';

const DIGEST = /^sha256:[a-f0-9]{64}$/;

/** `sha256:<hex>` of the bytes, as OCI descriptors write it. */
export function sha256Digest(data: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** Only sha256 digests are accepted (what ECR, Flux and every registry in use write). */
export function isDigest(value: string): boolean {
  return DIGEST.test(value);
}
