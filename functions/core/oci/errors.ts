import { SluiceError } from '../errors.ts';

/** Every failure of the artifact source: reason `ArtifactFailed`, the message names the thing. */
export function artifactError(message: string, cause?: unknown): SluiceError {
  return new SluiceError('ArtifactFailed', message, cause === undefined ? undefined : { cause });
}

/** A registry's error answer: the HTTP status and the distribution error codes, for callers that refine it. */
export class RegistryError extends SluiceError {
  override readonly name = 'RegistryError';
  constructor(
    message: string,
    readonly status: number,
    readonly codes: readonly string[],
  ) {
    super('ArtifactFailed', message);
  }
}
