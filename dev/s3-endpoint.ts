// The S3 stand-in: GetObject (path style, with ETag and If-None-Match) over objects tests put in
// memory, every request checked for a SigV4 signature of a known identity (S3's form: the path
// encoded once), and each object readable only by the principals it names when it names any.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySigV4, type TestIdentity } from './sigv4-identity.ts';

interface StoredObject {
  readonly body: Buffer;
  readonly etag: string;
  readonly lastModified: Date;
  /** ARNs allowed to read it; absent: any verified identity. */
  readonly readers?: readonly string[];
}

export interface S3EndpointOptions {
  readonly identities: readonly TestIdentity[];
  readonly now?: () => Date;
}

/** The S3 stand-in: a server, objects put in memory, and the requests it answered. */
export interface S3Endpoint {
  readonly server: Server;
  /** Puts (replaces) an object; returns its ETag (`"<md5>"`, as S3 gives for a single-part upload). */
  putObject(
    bucket: string,
    key: string,
    body: string | Buffer,
    options?: { readers?: readonly string[] },
  ): string;
  deleteObject(bucket: string, key: string): void;
  /** Every request answered: method, path, the verified signer (or the refusal's code) and the status. */
  readonly requests: { method: string; path: string; signer?: string; status: number; code?: string }[];
}

const xmlEscape = (text: string) =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!,
  );

/** S3's REST error: an XML body with Code and Message (what the SDK turns into a named exception). */
function s3Error(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message><RequestId>${randomUUID()}</RequestId></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * GetObject (`GET /<bucket>/<key>`, path style as the SDK sends to an IP endpoint) with ETag,
 * Content-Length and Last-Modified, answering 304 Not Modified when If-None-Match names the
 * object's ETag. Unsigned or badly signed requests get 403 as S3 answers them; an object that
 * names its readers is AccessDenied to anyone else; a missing object is NoSuchKey.
 */
export function createS3Endpoint(options: S3EndpointOptions): S3Endpoint {
  const now = options.now ?? (() => new Date());
  const objects = new Map<string, StoredObject>();
  const requests: S3Endpoint['requests'] = [];
  const objectKey = (bucket: string, key: string) => `${bucket}/${key}`;

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0]!;
    const record = (status: number, extra: { signer?: string; code?: string } = {}) =>
      requests.push({ method: req.method ?? '', path, status, ...extra });
    const verified = verifySigV4(
      { method: req.method ?? 'GET', url, headers: req.headers, body: body.toString('utf8') },
      options.identities,
      now(),
      { s3: true },
    );
    if ('error' in verified) {
      const code = verified.code === 'InvalidClientTokenId' ? 'InvalidAccessKeyId' : verified.code;
      record(403, { code });
      return s3Error(res, 403, code, verified.error);
    }
    const signer = verified.identity.arn;
    if (verified.service !== 's3') {
      record(403, { signer, code: 'SignatureDoesNotMatch' });
      return s3Error(
        res,
        403,
        'SignatureDoesNotMatch',
        `the request is signed for ${verified.service}, not s3`,
      );
    }
    const [, bucket = '', ...rest] = path.split('/');
    const key = decodeURIComponent(rest.join('/'));
    if (req.method !== 'GET' || !bucket || !key) {
      record(501, { signer, code: 'NotImplemented' });
      return s3Error(
        res,
        501,
        'NotImplemented',
        `${req.method} ${path} is not served by the local S3 stand-in (GetObject only)`,
      );
    }
    const object = objects.get(objectKey(bucket, key));
    if (!object) {
      record(404, { signer, code: 'NoSuchKey' });
      return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    }
    if (object.readers && !object.readers.includes(signer)) {
      record(403, { signer, code: 'AccessDenied' });
      return s3Error(
        res,
        403,
        'AccessDenied',
        `User: ${signer} is not authorized to perform: s3:GetObject on resource: arn:aws:s3:::${bucket}/${key}`,
      );
    }
    const headers = {
      etag: object.etag,
      'last-modified': object.lastModified.toUTCString(),
    };
    const ifNoneMatch = req.headers['if-none-match'];
    if (
      ifNoneMatch !== undefined &&
      ifNoneMatch.split(',').some((tag) => [object.etag, '*'].includes(tag.trim()))
    ) {
      record(304, { signer });
      res.writeHead(304, headers);
      return res.end();
    }
    record(200, { signer });
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/calendar',
      'content-length': object.body.length,
    });
    res.end(object.body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (error) {
        s3Error(res, 500, 'InternalError', (error as Error).message);
      }
    });
  });
  return {
    server,
    requests,
    putObject(bucket, key, body, put = {}) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
      const etag = `"${createHash('md5').update(bytes).digest('hex')}"`;
      objects.set(objectKey(bucket, key), {
        body: bytes,
        etag,
        lastModified: now(),
        ...(put.readers && { readers: put.readers }),
      });
      return etag;
    },
    deleteObject(bucket, key) {
      objects.delete(objectKey(bucket, key));
    },
  };
}

/** The stand-in listening on 127.0.0.1 (a free port), with its endpoint URL; close it with `s3.server.close`. */
export async function listenS3(options: S3EndpointOptions): Promise<{ s3: S3Endpoint; endpoint: string }> {
  const s3 = createS3Endpoint(options);
  await new Promise<void>((ready) => s3.server.listen(0, '127.0.0.1', ready));
  return { s3, endpoint: `http://127.0.0.1:${(s3.server.address() as AddressInfo).port}` };
}
