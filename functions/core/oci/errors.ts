import { SluiceError } from '../errors.ts';

/** Every failure of the artifact source: reason `ArtifactFailed`, the message names the thing. */
export function artifactError(message: string, cause?: unknown): SluiceError {
  return new SluiceError('ArtifactFailed', message, cause === undefined ? undefined : { cause });
}

/** Human-readable byte counts for limit messages. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** A registry's error answer: the HTTP status and the distribution error codes, for callers that refine it. */
export class RegistryError extends SluiceError {
  constructor(
    message: string,
    readonly status: number,
    readonly codes: readonly string[],
  ) {
    super('ArtifactFailed', message);
  }
}
