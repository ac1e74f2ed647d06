import bcrypt from 'bcryptjs';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startDaemon, waitUntilReady } from './processes.ts';

export interface Registry {
  readonly pid: number;
  /** host:port, as it appears in oci:// URLs. */
  readonly host: string;
  readonly username: string;
  readonly password: string;
}

/**
 * The CNCF distribution registry on 127.0.0.1 with htpasswd basic auth, as ECR's `AWS:<token>`;
 * `anonymous`: without auth, as a public registry (for `provider: 'generic'` sources).
 */
export async function startRegistry(
  binary: string,
  dir: string,
  { anonymous = false }: { readonly anonymous?: boolean } = {},
): Promise<Registry> {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const username = 'AWS';
  const password = randomBytes(24).toString('base64url');
  const storage = join(dir, 'registry-data');
  mkdirSync(storage, { recursive: true });
  const htpasswd = join(dir, 'registry.htpasswd');
  // The lowest bcrypt cost: the registry checks the password on every request, which ECR (that it
  // stands for) does not; at cost 6 that check was a third of its CPU in the benchmarks.
  writeFileSync(htpasswd, `${username}:${bcrypt.hashSync(password, 4)}\n`, { mode: 0o600 });
  const config = join(dir, 'registry.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log: { level: warn }',
      `storage: { filesystem: { rootdirectory: ${storage} }, delete: { enabled: true } }`,
      `http: { addr: "${host}", secret: ${randomBytes(16).toString('hex')} }`,
      ...(anonymous ? [] : [`auth: { htpasswd: { realm: sluice-local, path: ${htpasswd} } }`]),
      '',
    ].join('\n'),
  );
  const log = join(dir, 'registry.log');
  const pid = startDaemon(binary, ['serve', config], log);
  // /v2/ answers 401 once the registry is up and enforcing auth (200 without).
  await waitUntilReady({
    name: 'registry',
    pid,
    logFile: log,
    ready: async () => (await fetch(`http://${host}/v2/`)).status === (anonymous ? 200 : 401),
  });
  return { pid, host, username, password };
}
