// A Notation signature envelope (JWS JSON serialization, `application/jose+json`) read and its
// signature verified, as notation-core-go's signature/jws does. COSE envelopes are refused.
import { flattenedVerify } from 'jose';
import { chainProblem, jwsAlgorithmOf, readCertificate, type ChainCertificate } from './notation-chain.ts';

export const JWS_MEDIA_TYPE = 'application/jose+json';
export const COSE_MEDIA_TYPE = 'application/cose';
const PAYLOAD_CONTENT_TYPE = 'application/vnd.cncf.notary.payload.v1+json';
export const SCHEME_X509 = 'notary.x509';
export const SCHEME_SIGNING_AUTHORITY = 'notary.x509.signingAuthority';
const SIGNING_SCHEME = 'io.cncf.notary.signingScheme';
const SIGNING_TIME = 'io.cncf.notary.signingTime';
const AUTHENTIC_SIGNING_TIME = 'io.cncf.notary.authenticSigningTime';
const EXPIRY = 'io.cncf.notary.expiry';
const HEADER_KEYS = new Set([
  'alg',
  'cty',
  'crit',
  EXPIRY,
  SIGNING_TIME,
  SIGNING_SCHEME,
  AUTHENTIC_SIGNING_TIME,
]);
export const VERIFICATION_PLUGIN = 'io.cncf.notary.verificationPlugin';

/** What a verified envelope says: its signer's chain, scheme, times, payload and other signed attributes. */
export interface NotationEnvelope {
  readonly chain: readonly ChainCertificate[];
  readonly scheme: typeof SCHEME_X509 | typeof SCHEME_SIGNING_AUTHORITY;
  /** io.cncf.notary.signingTime (not authentic) or, for the signing-authority scheme, the authentic signing time. */
  readonly signingTime?: Date;
  readonly expiry?: Date;
  /** The protected header's other attributes (extended attributes), and which of them are critical. */
  readonly extended: Readonly<Record<string, unknown>>;
  readonly critical: readonly string[];
  readonly payload: Buffer;
}

/** An Error whose message says why the envelope is refused (the caller adds which signature). */
class EnvelopeError extends Error {}

function time(header: Record<string, unknown>, key: string): Date | undefined {
  const value = header[key];
  if (value === undefined) return undefined;
  const parsed = typeof value === 'string' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(parsed.getTime())) throw new EnvelopeError(`its ${key} is not an RFC 3339 time`);
  return parsed;
}

function decodeJson(base64url: string, what: string): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8')) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new EnvelopeError(`its ${what} is not a base64url JSON object`);
}

/**
 * Reads and verifies the envelope `blob` of `mediaType`: the protected header as Notation requires
 * it (alg, cty, crit naming the signing scheme, expiry and authentic signing time when present,
 * every critical name present), the x5c chain (a code-signing chain, see chainProblem), the alg
 * the leaf's key signs with, and the JWS signature over protected header and payload. Throws an
 * Error saying what is wrong; says nothing yet of trust (stores, identities, times).
 */
export async function readEnvelope(blob: Buffer, mediaType: string): Promise<NotationEnvelope> {
  if (mediaType === COSE_MEDIA_TYPE)
    throw new EnvelopeError(
      'it is a COSE envelope (application/cose), which sluice does not verify: sign with the JWS format (notation sign --signature-format jws, the default)',
    );
  if (mediaType !== JWS_MEDIA_TYPE)
    throw new EnvelopeError(`its envelope media type ${mediaType} is not ${JWS_MEDIA_TYPE}`);
  let jws: { payload?: unknown; protected?: unknown; header?: unknown; signature?: unknown };
  try {
    jws = JSON.parse(blob.toString('utf8')) as typeof jws;
  } catch {
    throw new EnvelopeError('its envelope is not JSON');
  }
  if (
    typeof jws.payload !== 'string' ||
    typeof jws.protected !== 'string' ||
    typeof jws.signature !== 'string'
  )
    throw new EnvelopeError('its envelope is not a flattened JWS (payload, protected, signature)');
  const unprotected = (jws.header ?? {}) as { x5c?: unknown };
  const header = decodeJson(jws.protected, 'protected header');

  const scheme = header[SIGNING_SCHEME];
  if (scheme !== SCHEME_X509 && scheme !== SCHEME_SIGNING_AUTHORITY)
    throw new EnvelopeError(
      `its signing scheme ${JSON.stringify(scheme)} is neither ${SCHEME_X509} nor ${SCHEME_SIGNING_AUTHORITY}`,
    );
  if (scheme === SCHEME_X509 && header[AUTHENTIC_SIGNING_TIME] !== undefined)
    throw new EnvelopeError(
      `it has ${AUTHENTIC_SIGNING_TIME}, which the ${SCHEME_X509} scheme must not have`,
    );
  if (scheme === SCHEME_SIGNING_AUTHORITY) {
    if (header[SIGNING_TIME] !== undefined)
      throw new EnvelopeError(
        `it has ${SIGNING_TIME}, which the ${SCHEME_SIGNING_AUTHORITY} scheme must not have`,
      );
    if (header[AUTHENTIC_SIGNING_TIME] === undefined)
      throw new EnvelopeError(
        `it has no ${AUTHENTIC_SIGNING_TIME}, which the ${SCHEME_SIGNING_AUTHORITY} scheme requires`,
      );
  }
  const expiry = time(header, EXPIRY);
  const signingTime = time(header, scheme === SCHEME_X509 ? SIGNING_TIME : AUTHENTIC_SIGNING_TIME);
  if (header.cty !== PAYLOAD_CONTENT_TYPE)
    throw new EnvelopeError(
      `its payload content type ${JSON.stringify(header.cty)} is not ${PAYLOAD_CONTENT_TYPE}`,
    );

  const crit = header.crit;
  if (!Array.isArray(crit) || crit.length === 0 || !crit.every((name) => typeof name === 'string'))
    throw new EnvelopeError('it has no "crit" header');
  const required = [
    SIGNING_SCHEME,
    ...(expiry ? [EXPIRY] : []),
    ...(scheme === SCHEME_SIGNING_AUTHORITY ? [AUTHENTIC_SIGNING_TIME] : []),
  ];
  const unmarked = required.filter((name) => !crit.includes(name));
  if (unmarked.length > 0) throw new EnvelopeError(`it does not mark ${unmarked.join(', ')} critical`);
  const extended: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(header)) if (!HEADER_KEYS.has(key)) extended[key] = value;
  const absent = (crit as string[]).filter((name) => !required.includes(name) && !(name in extended));
  if (absent.length > 0)
    throw new EnvelopeError(`it marks ${absent.join(', ')} critical but does not have them`);

  if (!Array.isArray(unprotected.x5c) || unprotected.x5c.length === 0)
    throw new EnvelopeError('it has no certificate chain (x5c)');
  let chain: ChainCertificate[];
  try {
    chain = unprotected.x5c.map((entry) => {
      if (typeof entry !== 'string') throw new Error('an x5c entry is not a string');
      return readCertificate(Buffer.from(entry, 'base64'));
    });
  } catch (error) {
    throw new EnvelopeError(`its certificate chain cannot be read (${(error as Error).message})`);
  }
  const problem = chainProblem(chain);
  if (problem) throw new EnvelopeError(problem);
  const leaf = chain[0]!;
  const alg = jwsAlgorithmOf(leaf.x509);
  if (!alg || header.alg !== alg)
    throw new EnvelopeError(
      `its alg ${JSON.stringify(header.alg)} is not ${alg}, the algorithm of the signing certificate's key`,
    );

  // Notation's own critical attributes are read above; extended ones are the caller's to
  // understand (refused there when it does not), so jose is told all are recognized.
  const recognized = Object.fromEntries((crit as string[]).map((name) => [name, true]));
  try {
    const verified = await flattenedVerify(
      { payload: jws.payload, protected: jws.protected, signature: jws.signature },
      leaf.x509.publicKey,
      { algorithms: [alg], crit: recognized },
    );
    return {
      chain,
      scheme,
      ...(signingTime && { signingTime }),
      ...(expiry && { expiry }),
      extended,
      critical: crit as string[],
      payload: Buffer.from(verified.payload),
    };
  } catch (error) {
    throw new EnvelopeError(
      `its signature does not verify with its signing certificate's key (${(error as Error).message})`,
    );
  }
}
