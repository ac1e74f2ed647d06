import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

/** How AWS Signer (a REST JSON service) names the signature errors verifySigV4 reports. */
const SIGNATURE_ERRORS: Record<string, string> = {
  MissingAuthenticationToken: 'MissingAuthenticationTokenException',
  InvalidClientTokenId: 'UnrecognizedClientException',
  ExpiredToken: 'ExpiredTokenException',
};

/** The AWS Signer stand-in: its server, and what it says is revoked. */
export interface SignerEndpoint {
  readonly server: Server;
  /**
   * Revokes a signing profile (every version: its ARN), a profile version, a signing job (their
   * ARNs) or a certificate (its hash as GetRevocationStatus takes it).
   */
  revoke(entity: string): void;
  /** The GetRevocationStatus queries answered, in order (the query string's parameters). */
  readonly queries: URLSearchParams[];
}

/**
 * signer:GetRevocationStatus (GET /revocations) over REST JSON, answering only a request whose
 * Signature Version 4 holds for one of `identities`, signed for `signer`. It checks the required
 * parameters as AWS Signer does (signatureTimestamp, platformId, profileVersionArn, jobArn,
 * certificateHashes) and answers `revokedEntities`: those of the request revoked with revoke(),
 * a profile revoked by its ARN revoking each of its versions. Anything else is refused.
 */
export function createSignerEndpoint(options: {
  readonly identities: readonly TestIdentity[];
  readonly now?: () => Date;
}): SignerEndpoint {
  const revoked = new Set<string>();
  const queries: URLSearchParams[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const reply = (status: number, json: unknown, errorType?: string) =>
        response
          .writeHead(status, {
            'content-type': 'application/json',
            'x-amzn-requestid': randomUUID(),
            ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
          })
          .end(JSON.stringify(json));
      const fail = (status: number, type: string, message: string) => reply(status, { message }, type);
      const url = request.url ?? '/';
      const verified = verifySigV4(
        {
          method: request.method ?? 'GET',
          url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        },
        options.identities,
        (options.now ?? (() => new Date()))(),
      );
      if ('error' in verified)
        return fail(403, SIGNATURE_ERRORS[verified.code] ?? 'InvalidSignatureException', verified.error);
      if (verified.service !== 'signer')
        return fail(403, 'InvalidSignatureException', `signed for ${verified.service}, not signer`);
      const [path, query = ''] = url.split(/\?(.*)/s);
      if (request.method !== 'GET' || path !== '/revocations')
        return fail(
          400,
          'ValidationException',
          `the AWS Signer stand-in answers GetRevocationStatus (GET /revocations) only, not ${request.method} ${path}`,
        );
      const params = new URLSearchParams(query);
      const missing = [
        'signatureTimestamp',
        'platformId',
        'profileVersionArn',
        'jobArn',
        'certificateHashes',
      ].filter((name) => !params.get(name));
      if (missing.length > 0) return fail(400, 'ValidationException', `missing ${missing.join(', ')}`);
      if (Number.isNaN(Date.parse(params.get('signatureTimestamp')!)))
        return fail(400, 'ValidationException', 'signatureTimestamp is not a timestamp');
      queries.push(params);
      const profileVersion = params.get('profileVersionArn')!;
      const candidates = [
        profileVersion,
        profileVersion.slice(0, profileVersion.lastIndexOf('/')),
        params.get('jobArn')!,
        ...params.getAll('certificateHashes'),
      ];
      reply(200, { revokedEntities: candidates.filter((entity) => revoked.has(entity)) });
    });
  });
  return { server, revoke: (entity) => revoked.add(entity), queries };
}
