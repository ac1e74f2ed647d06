// The kustomize child's cage: no git and dead proxies (a loopback trap counts what reaches it),
// sluice's limits on every file kustomize would read, and a hard memory cap.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SluiceError } from '../../../functions/core/errors.ts';
import { runKustomize } from '../../../functions/core/manifests/kustomize.ts';
import { buildError, configMap, kubectl } from './fixtures.ts';

const created: string[] = [];
afterAll(() => created.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function kustomizationDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cage-test-'));
  created.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function failure(work: Promise<unknown>): Promise<SluiceError> {
  const error = await work.then(
    () => new Error('expected kustomize to fail'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SluiceError);
  return error as SluiceError;
}

/** A billion-laughs YAML: 9 levels of 9 aliases, under 500 bytes. */
function laughs(): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: lol}', 'a0: &a0 "lol"'];
  for (let level = 1; level <= 9; level++) {
    const previous = Array.from({ length: 9 }, () => `*a${level - 1}`).join(',');
    lines.push(`a${level}: &a${level} [${previous}]`);
  }
  lines.push('data: {k: *a9}');
  return `${lines.join('\n')}\n`;
}

describe('the trap: git-based remote bases cannot reach the network from the kustomize child', () => {
  let requests = 0;
  // Counts connections, so a git-over-ssh attempt counts as much as an HTTP request.
  const trap = createServer((_, response) => response.end());
  trap.on('connection', () => requests++);
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((listening) => trap.listen(0, '127.0.0.1', listening));
    port = (trap.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((closed) => trap.close(() => closed())));

  it.each([
    (p: number) => `git::http://127.0.0.1:${p}/org/repo.git//base`,
    (p: number) => `ssh://git@127.0.0.1:${p}/org/repo.git//base`,
    (p: number) => `git::http://127.0.0.1:${p}/org/repo`,
  ])('sends no request for %s (structural check bypassed)', async (form) => {
    const dir = kustomizationDir({ 'kustomization.yaml': `resources: ["${form(port)}"]\n` });
    const before = requests;
    await failure(
      runKustomize(dir, { kubectl: kubectl(), timeoutMs: 30_000 }, { home: dir, hide: dir, as: '' }),
    );
    expect(requests - before).toBe(0);
  });
});

describe('limits on what kustomize reads', () => {
  it('refuses a billion-laughs file listed in resources, naming it, before kustomize starts', async () => {
    const error = await buildError(
      { 'app/kustomization.yaml': 'resources: [lol.yaml]\n', 'app/lol.yaml': laughs() },
      { path: 'app' },
    );
    expect(error.reason).toBe('BuildFailed');
    expect(error.message).toMatch(
      /^app\/lol\.yaml: invalid YAML: Excessive alias count.*; kustomize was not run$/,
    );
  });

  it('refuses a billion-laughs file used as a patch', async () => {
    const error = await buildError(
      {
        'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n  - path: lol.yaml\n',
        'app/cm.yaml': configMap('lol', { k: 'v' }),
        'app/lol.yaml': laughs(),
      },
      { path: 'app' },
    );
    expect(error.message).toContain('app/lol.yaml: invalid YAML: Excessive alias count');
  });
});

describe('the memory cap', () => {
  it('kills kustomize past its cap, with an error naming the cap and the build, and stays usable', async () => {
    const dir = kustomizationDir({ 'kustomization.yaml': 'resources: [lol.yaml]\n', 'lol.yaml': laughs() });
    const maxMemoryBytes = 64 * 1024 * 1024;
    const options = { kubectl: kubectl(), timeoutMs: 120_000, maxMemoryBytes };
    const place = { home: dir, hide: dir, as: '', building: 'app/kustomization.yaml' };
    const error = await failure(runKustomize(dir, options, place));
    expect(error).toMatchObject({
      reason: 'BuildFailed',
      message: 'kustomize used more than 64 MiB building app/kustomization.yaml',
    });
    // The same input fails the same way again (a retry neither loops nor grows).
    const again = await failure(runKustomize(dir, options, place));
    expect(again.message).toBe(error.message);
  });
});
