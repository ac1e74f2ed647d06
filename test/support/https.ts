import { request } from 'node:https';

export interface HttpsResponse {
  readonly status: number;
  readonly body: string;
}

/** A raw HTTPS request trusting `ca`: for tests that must see exactly what the API server answers. */
export function httpsRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; ca: string | Buffer },
): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, ca: options.ca },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
