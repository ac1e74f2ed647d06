// A local Fulcio (certificate authority with its CT log) and Rekor (transparency log), from the
// Sigstore project's own @sigstore/mock, served on 127.0.0.1 so the real cosign can sign keyless
// against them (test/fixtures/cosign-keyless/generate.ts). The mock speaks Fulcio's v2 API; cosign
// v2 asks Fulcio's legacy v1 API (POST /api/v1/signingCert, the key in the body, the OIDC token as a
// bearer token, the chain answered as PEM), so that one route is translated here. Rekor's
// POST /api/v1/log/entries is the mock's own handler. The identity token is not checked (as in the
// mock): the certificate names the token's `iss` and `sub` claims.
import { generateKeyPairSync, createHash, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { fulcioHandler, initializeCA, initializeCTLog, initializeTLog, rekorHandler } from '@sigstore/mock';

export interface SigstoreMock {
  /** `http://127.0.0.1:<port>`: both Fulcio and Rekor. */
  readonly url: string;
  /** The Fulcio root certificate (PEM), for cosign's SIGSTORE_ROOT_FILE. */
  readonly fulcioRootPem: string;
  /** Rekor's public key (PEM), for cosign's SIGSTORE_REKOR_PUBLIC_KEY. */
  readonly rekorPublicKeyPem: string;
  /** The CT log's public key (PEM), for cosign's SIGSTORE_CT_LOG_PUBLIC_KEY_FILE. */
  readonly ctLogPublicKeyPem: string;
  /** Sigstore's TrustedRoot (JSON) naming this Fulcio, CT log and Rekor, valid from `since`. */
  trustedRoot(since: Date): Record<string, unknown>;
  close(): Promise<void>;
}

const pem = (label: string, der: Buffer) =>
  `-----BEGIN ${label}-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END ${label}-----\n`;

const ecKeyPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = (key: KeyObject) => key.export({ format: 'der', type: 'spki' });

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Starts the mock Fulcio and Rekor on 127.0.0.1 (a free port), with fresh keys. */
export async function startSigstoreMock(): Promise<SigstoreMock> {
  const caKeys = ecKeyPair();
  const ctKeys = ecKeyPair();
  const rekorKeys = ecKeyPair();
  const ctLog = await initializeCTLog(ctKeys);
  const ca = await initializeCA(caKeys, ctLog);
  const fulcio = fulcioHandler(ca);

  const handle = async (request: IncomingMessage): Promise<[number, string, string]> => {
    const body = await readBody(request);
    if (request.method === 'POST' && request.url === '/api/v1/signingCert') {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      if (!token) return [401, 'text/plain', 'no bearer token'];
      const legacy = JSON.parse(body) as { publicKey?: { content?: string; algorithm?: string } };
      const content = legacy.publicKey?.content;
      if (!content) return [400, 'text/plain', 'no publicKey.content'];
      // cosign sends the key as PEM (base64 in the JSON); DER is taken too.
      const key = Buffer.from(content, 'base64');
      const keyPem = key.toString('latin1').startsWith('-----BEGIN')
        ? key.toString('latin1')
        : pem('PUBLIC KEY', key);
      const answer = await fulcio.fn(
        JSON.stringify({
          credentials: { oidcIdentityToken: token },
          publicKeyRequest: { publicKey: { content: keyPem } },
        }),
      );
      if (answer.statusCode !== 201) return [answer.statusCode, 'text/plain', String(answer.response)];
      const chain = (
        JSON.parse(String(answer.response)) as {
          signedCertificateEmbeddedSct: { chain: { certificates: string[] } };
        }
      ).signedCertificateEmbeddedSct.chain.certificates;
      return [201, 'application/pem-certificate-chain', chain.join('')];
    }
    if (request.method === 'POST' && request.url === '/api/v1/log/entries') {
      const answer = await rekor.fn(body);
      return [answer.statusCode, answer.contentType ?? 'text/plain', String(answer.response)];
    }
    return [404, 'text/plain', `the mock serves no ${request.method} ${request.url}`];
  };
  const server: Server = createServer((request, response) => {
    handle(request).then(
      ([status, type, text]) => response.writeHead(status, { 'content-type': type }).end(text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(error.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the Sigstore mock has no port');
  const url = `http://127.0.0.1:${address.port}`;
  const tlog = await initializeTLog(url, rekorKeys);
  const rekor = rekorHandler(tlog);

  const rootDer = Buffer.from(ca.rootCertificate.buffer);
  const logKey = (key: Buffer, since: Date) => ({
    rawBytes: key.toString('base64'),
    keyDetails: 'PKIX_ECDSA_P256_SHA_256',
    validFor: { start: since.toISOString() },
  });
  const logId = (key: Buffer) => ({ keyId: createHash('sha256').update(key).digest('base64') });
  return {
    url,
    fulcioRootPem: pem('CERTIFICATE', rootDer),
    rekorPublicKeyPem: pem('PUBLIC KEY', spki(rekorKeys.publicKey)),
    ctLogPublicKeyPem: pem('PUBLIC KEY', spki(ctKeys.publicKey)),
    trustedRoot: (since) => ({
      mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
      tlogs: [
        {
          baseUrl: url,
          hashAlgorithm: 'SHA2_256',
          publicKey: logKey(spki(rekorKeys.publicKey), since),
          logId: logId(spki(rekorKeys.publicKey)),
        },
      ],
      certificateAuthorities: [
        {
          subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
          uri: url,
          certChain: { certificates: [{ rawBytes: rootDer.toString('base64') }] },
          validFor: { start: since.toISOString() },
        },
      ],
      ctlogs: [
        {
          baseUrl: url,
          hashAlgorithm: 'SHA2_256',
          publicKey: logKey(spki(ctKeys.publicKey), since),
          logId: logId(spki(ctKeys.publicKey)),
        },
      ],
      timestampAuthorities: [],
    }),
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
