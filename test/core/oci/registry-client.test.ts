// The distribution API client against a scripted `fetch`: the Bearer token flow (ghcr.io, Docker
// Hub), pagination and scheme choice, which the local registry (Basic auth, http) does not cover.
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RegistryClient, type RegistryCredentials } from '../../../functions/core/oci/index.ts';

interface Call {
  url: string;
  method: string;
  authorization?: string;
}

function scriptedFetch(handler: (url: URL, call: Call) => Response): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fake = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const headers = new Headers(init?.headers);
    const call = {
      url: url.toString(),
      method: init?.method ?? 'GET',
      ...(headers.get('authorization') ? { authorization: headers.get('authorization')! } : {}),
    };
    calls.push(call);
    return handler(url, call);
  };
  return { fetch: fake as typeof fetch, calls };
}

const creds: RegistryCredentials = async () => ({ username: 'robot', password: 's3cret' });
const basic = `Basic ${Buffer.from('robot:s3cret').toString('base64')}`;
const json = (body: unknown, init: ResponseInit = {}) =>
  new Response(JSON.stringify(body), {
    ...init,
    headers: { 'content-type': 'application/json', ...init.headers },
  });

describe('RegistryClient', () => {
  it('answers a Bearer challenge with a token from the realm, then follows tag pages', async () => {
    const { fetch, calls } = scriptedFetch((url, call) => {
      if (url.host === 'auth.example.com') {
        expect(url.searchParams.get('service')).toBe('registry.example.com');
        expect(url.searchParams.get('scope')).toBe('repository:org/app:pull');
        return call.authorization === basic ? json({ token: 'T0KEN' }) : new Response(null, { status: 401 });
      }
      if (call.authorization !== 'Bearer T0KEN') {
        return new Response(null, {
          status: 401,
          headers: {
            'www-authenticate':
              'Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:org/app:pull"',
          },
        });
      }
      if (url.searchParams.get('last') === 'b') return json({ name: 'org/app', tags: ['c'] });
      return json(
        { name: 'org/app', tags: ['a', 'b'] },
        { headers: { link: '</v2/org/app/tags/list?n=2&last=b>; rel="next"' } },
      );
    });
    const client = new RegistryClient({ host: 'registry.example.com', credentials: creds, fetch });
    expect(await client.listTags('org/app')).toEqual(['a', 'b', 'c']);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'GET https://registry.example.com/v2/org/app/tags/list?n=1000',
      'GET https://auth.example.com/token?service=registry.example.com&scope=repository%3Aorg%2Fapp%3Apull',
      'GET https://registry.example.com/v2/org/app/tags/list?n=1000',
      'GET https://registry.example.com/v2/org/app/tags/list?n=2&last=b',
    ]);
  });

  it('fetches an anonymous token when there are no credentials', async () => {
    const { fetch, calls } = scriptedFetch((url, call) => {
      if (url.pathname === '/token') return json({ access_token: 'anon' });
      if (call.authorization === 'Bearer anon') return json({ tags: ['v1'] });
      return new Response(null, {
        status: 401,
        headers: { 'www-authenticate': 'Bearer realm="https://ghcr.io/token",service="ghcr.io"' },
      });
    });
    const client = new RegistryClient({ host: 'ghcr.io', credentials: async () => undefined, fetch });
    expect(await client.listTags('org/app')).toEqual(['v1']);
    expect(calls[1]?.authorization).toBeUndefined();
    expect(new URL(calls[1]!.url).searchParams.get('scope')).toBe('repository:org/app:pull');
  });

  it('says credentials were refused when the token service refuses them', async () => {
    const { fetch } = scriptedFetch((url) =>
      url.pathname === '/token'
        ? new Response(null, { status: 401 })
        : new Response(null, {
            status: 401,
            headers: { 'www-authenticate': 'Bearer realm="https://ghcr.io/token"' },
          }),
    );
    const client = new RegistryClient({ host: 'ghcr.io', credentials: creds, fetch });
    await expect(client.listTags('org/app')).rejects.toThrow(
      /ghcr\.io\/org\/app: credentials were refused by the token service https:\/\/ghcr\.io \(HTTP 401\)/,
    );
  });

  it('uses http only on loopback or when insecure', async () => {
    const { fetch, calls } = scriptedFetch(() => json({ tags: [] }));
    for (const [host, insecure] of [
      ['127.0.0.1:5000', false],
      ['localhost:5000', false],
      ['[::1]:5000', false],
      ['registry.internal:5000', true],
      ['registry.internal:5000', false],
    ] as const) {
      await new RegistryClient({ host, credentials: creds, insecure, fetch }).listTags('app');
    }
    expect(calls.map((c) => new URL(c.url).origin)).toEqual([
      'http://127.0.0.1:5000',
      'http://localhost:5000',
      'http://[::1]:5000',
      'http://registry.internal:5000',
      'https://registry.internal:5000',
    ]);
  });

  it('maps Docker Hub names to registry-1.docker.io and library/', async () => {
    const { fetch, calls } = scriptedFetch(() => json({ tags: [] }));
    await new RegistryClient({ host: 'docker.io', credentials: creds, fetch }).listTags('alpine');
    expect(calls[0]?.url).toBe('https://registry-1.docker.io/v2/library/alpine/tags/list?n=1000');
  });

  it('names registry, repository, reference and status in errors', async () => {
    const { fetch } = scriptedFetch(() =>
      json({ errors: [{ code: 'DENIED', message: 'not allowed' }] }, { status: 403 }),
    );
    const client = new RegistryClient({ host: 'ghcr.io', credentials: creds, fetch });
    await expect(client.getManifest('org/app', 'v1')).rejects.toThrow(
      'ghcr.io/org/app:v1: access denied: credentials were refused for this repository (HTTP 403, DENIED: not allowed)',
    );
  });

  it('says which host could not be reached', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.close();
    await once(server, 'close');
    const client = new RegistryClient({ host, credentials: creds });
    await expect(client.listTags('app')).rejects.toThrow(`${host}/app: cannot reach registry ${host}`);
    await expect(client.listTags('app')).rejects.toThrow('ECONNREFUSED');
  });
});
