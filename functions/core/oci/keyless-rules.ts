// What the config schema checks of a keyless verify block, without Sigstore's libraries: the
// construct and every function parse configs, and only a run that verifies a keyless signature
// loads @sigstore/verify (oci/keyless.ts), which checks the trusted root in full.
import { compileGoRegexp, GoRegexpError } from '../go-regexp.ts';

/** A pattern matches the whole string, as `^(?:pattern)$` (cosign's own regexp flags match anywhere). */
export function anchored(pattern: string): string {
  return `^(?:${pattern})$`;
}

/** What is wrong with a keyless identity pattern, or undefined when RE2 (Go's dialect) compiles it. */
export function identityPatternProblem(pattern: string): string | undefined {
  try {
    compileGoRegexp(anchored(pattern));
    return undefined;
  } catch (error) {
    if (error instanceof GoRegexpError) return `is not a usable Go regular expression: ${error.message}`;
    throw error;
  }
}

/**
 * What is wrong with the shape of a trusted root (Sigstore's TrustedRoot JSON), or undefined when
 * it has one: its media type and at least one certificate authority, transparency log and CT log.
 * Its keys and certificates are read when a run first verifies against it (oci/keyless.ts).
 */
export function trustedRootShapeProblem(json: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return `is not JSON (${(error as Error).message})`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return 'is not a JSON object (a Sigstore trusted root)';
  const root = parsed as Record<string, unknown>;
  const mediaType = typeof root.mediaType === 'string' ? root.mediaType : '';
  if (!/^application\/vnd\.dev\.sigstore\.trustedroot(\.v[\d.]+)?\+json/.test(mediaType))
    return `has mediaType "${mediaType}", not a Sigstore trusted root (application/vnd.dev.sigstore.trustedroot+json;version=0.1)`;
  const listed = (field: string) => Array.isArray(root[field]) && (root[field] as unknown[]).length > 0;
  if (!listed('certificateAuthorities')) return 'names no certificateAuthorities (Fulcio)';
  if (!listed('tlogs')) return 'names no tlogs (Rekor)';
  if (!listed('ctlogs')) return 'names no ctlogs (the CT logs Fulcio publishes to)';
  return undefined;
}
