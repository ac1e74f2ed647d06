import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerConfigCredentials } from '../../../functions/core/oci/index.ts';

function config(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-docker-')), 'config.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('dockerConfigCredentials', () => {
  const path = config({
    auths: {
      'ghcr.io': { auth: Buffer.from('octocat:ghp_token:with:colons').toString('base64') },
      'https://registry.example.com:5000/v2/': { username: 'robot', password: 'pw' },
      'https://index.docker.io/v1/': { auth: Buffer.from('hubuser:hubpw').toString('base64') },
    },
  });
  const credentials = dockerConfigCredentials(path);

  it('reads base64 auth and username/password entries, keyed by host with or without scheme', async () => {
    expect(await credentials('ghcr.io')).toEqual({ username: 'octocat', password: 'ghp_token:with:colons' });
    expect(await credentials('registry.example.com:5000')).toEqual({ username: 'robot', password: 'pw' });
    expect(await credentials('docker.io')).toEqual({ username: 'hubuser', password: 'hubpw' });
  });

  it('is anonymous for unknown hosts and missing files', async () => {
    expect(await credentials('quay.io')).toBeUndefined();
    expect(
      await dockerConfigCredentials(join(tmpdir(), 'does-not-exist', 'config.json'))('ghcr.io'),
    ).toBeUndefined();
  });

  it('names the file when it cannot be read', async () => {
    const broken = config('{ not json');
    await expect(dockerConfigCredentials(broken)('ghcr.io')).rejects.toThrow(broken);
  });
});
