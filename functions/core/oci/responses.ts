import { causeOf } from './challenge.ts';
import { formatBytes } from '../limits.ts';
import { artifactError, RegistryError } from './errors.ts';

export type RequestKind = 'manifest' | 'blob' | 'tags' | 'upload';

/**
 * The error for a registry's non-success answer: names the reference, says what the status means
 * (401/403 refused credentials, 404 which thing is missing) and quotes the distribution error codes.
 */
export async function registryError(
  response: Response,
  context: { label: string; what: RequestKind; reference?: string; host: string; hasCredentials: boolean },
): Promise<RegistryError> {
  const { label, what, reference } = context;
  const text = await readCapped(response, { maxBytes: 64 * 1024, label, what: 'error' }).then(
    (body) => body.toString('utf8'),
    () => '',
  );
  let errors: { code?: string; message?: string }[] = [];
  try {
    errors = (JSON.parse(text) as { errors?: typeof errors }).errors ?? [];
  } catch {
    // not a distribution error body
  }
  const codes = errors.map((e) => e.code).filter((c): c is string => !!c);
  const detail = errors.map((e) => [e.code, e.message].filter(Boolean).join(': ')).join('; ');
  const status = response.status;
  let summary: string;
  if (status === 401) {
    summary = context.hasCredentials
      ? 'credentials were refused'
      : `credentials were refused (none were found for ${context.host}; anonymous access is not allowed)`;
  } else if (status === 403) {
    summary = 'access denied: credentials were refused for this repository';
  } else if (status === 404) {
    if (codes.includes('NAME_UNKNOWN') || what === 'tags') summary = 'repository not found';
    else if (what === 'manifest' && reference?.startsWith('sha256:')) summary = 'manifest digest not found';
    else if (what === 'manifest' && reference !== undefined) summary = `tag "${reference}" not found`;
    else if (what === 'blob') summary = 'blob not found';
    else summary = 'not found';
  } else if (status === 429) {
    summary = 'rate limited by the registry';
  } else {
    summary = `the registry refused the ${what} request`;
  }
  return new RegistryError(
    `${label}: ${summary} (HTTP ${status}${detail ? `, ${detail}` : ''})`,
    status,
    codes,
  );
}

/** The body, refusing to read more than `maxBytes`. */
export interface ReadLimit {
  readonly maxBytes: number;
  /** Names the artifact in errors. */
  readonly label: string;
  /** What the body is (`manifest`, `blob`), in errors. */
  readonly what: string;
  /** Which limit `maxBytes` is, in errors. @default 'the limit' */
  readonly limitName?: string;
}

export async function readCapped(
  response: Response,
  { maxBytes, label, what, limitName = 'the limit' }: ReadLimit,
): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw artifactError(
      `${label}: the ${what} is ${exactBytes(declared)}, more than ${exactBytes(maxBytes)} (${limitName})`,
    );
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    let read: Awaited<ReturnType<typeof reader.read>>;
    try {
      read = await reader.read();
    } catch (error) {
      throw artifactError(
        `${label}: the connection broke while reading the ${what} after ${exactBytes(total)}: ${causeOf(error)}`,
        error,
      );
    }
    const { done, value } = read;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw artifactError(`${label}: the ${what} is more than ${exactBytes(maxBytes)} (${limitName})`);
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return Buffer.concat(chunks, total);
}

function exactBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${formatBytes(bytes)} (${bytes} bytes)`;
}

/** The `rel="next"` target of a `Link` header. */
export function nextLink(header: string | null): string | undefined {
  for (const part of (header ?? '').split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match) return match[1];
  }
  return undefined;
}
