// Running kubectl kustomize: its limits, and a missing binary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SluiceError } from '../../../functions/core/errors.ts';
import { reconcileDepsFromEnvironment } from '../../../functions/core/environment.ts';
import { commandOnPath, runKustomize } from '../../../functions/core/manifests/kustomize.ts';
import { configMap, kubectl } from './fixtures.ts';

const created: string[] = [];
afterAll(() => created.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function kustomizationDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-kustomize-test-'));
  created.push(dir);
  writeFileSync(join(dir, 'kustomization.yaml'), 'resources: [cm.yaml]\n');
  writeFileSync(join(dir, 'cm.yaml'), configMap('a', { key: 'x'.repeat(1000) }));
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

describe('runKustomize', () => {
  it('returns the built YAML', async () => {
    const dir = kustomizationDir();
    const output = await runKustomize(
      dir,
      { kubectl: kubectl(), timeoutMs: 30_000 },
      { home: dir, hide: dir, as: '' },
    );
    expect(output).toContain('kind: ConfigMap');
  });

  it('stops kustomize when it takes longer than the timeout', async () => {
    const dir = kustomizationDir();
    const error = await failure(
      runKustomize(dir, { kubectl: kubectl(), timeoutMs: 1 }, { home: dir, hide: dir, as: '' }),
    );
    expect(error).toMatchObject({
      reason: 'BuildFailed',
      message: 'kubectl kustomize was stopped: it did not finish within 0.001s',
    });
  });

  it('stops kustomize when its output is larger than the limit', async () => {
    const dir = kustomizationDir();
    const error = await failure(
      runKustomize(
        dir,
        { kubectl: kubectl(), timeoutMs: 30_000, maxOutputBytes: 512 },
        { home: dir, hide: dir, as: '' },
      ),
    );
    expect(error.message).toMatch(/^kubectl kustomize was stopped: its output is larger than the limit of/);
  });

  it('finds kubectl on PATH as documented when SLUICE_KUBECTL is unset, though kustomize runs with an empty PATH', async () => {
    const dir = kustomizationDir();
    const saved = {
      PATH: process.env.PATH,
      SLUICE_KUBECTL: process.env.SLUICE_KUBECTL,
      SLUICE_TABLE: process.env.SLUICE_TABLE,
    };
    process.env.PATH = ['relative/bin', '/nonexistent', dirname(kubectl())].join(':');
    delete process.env.SLUICE_KUBECTL;
    process.env.SLUICE_TABLE ??= 'path-test'; // the deps only name it; nothing is called
    let resolved: string;
    try {
      resolved = reconcileDepsFromEnvironment({ runId: 'path-test' }).kubectl!;
    } finally {
      for (const [key, value] of Object.entries(saved))
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
    }
    expect(resolved).toBe(kubectl());
    const output = await runKustomize(
      dir,
      { kubectl: resolved, timeoutMs: 30_000 },
      { home: dir, hide: dir, as: '' },
    );
    expect(output).toContain('kind: ConfigMap');
    expect(commandOnPath('kubectl', '/nonexistent:relative')).toBe('kubectl');
  });

  it('says a bare name is not looked up on the empty PATH of the build', async () => {
    const dir = kustomizationDir();
    const error = await failure(
      runKustomize(dir, { kubectl: 'kubectl', timeoutMs: 30_000 }, { home: dir, hide: dir, as: '' }),
    );
    expect(error.message).toContain(
      'kubectl not found at "kubectl" (the build runs with an empty PATH: give a path): set SLUICE_KUBECTL',
    );
  });

  it('says how to point sluice at kubectl when the binary is missing', async () => {
    const dir = kustomizationDir();
    const error = await failure(
      runKustomize(
        dir,
        { kubectl: '/nonexistent/kubectl', timeoutMs: 30_000 },
        { home: dir, hide: dir, as: '' },
      ),
    );
    expect(error.message).toContain('kubectl not found at "/nonexistent/kubectl": set SLUICE_KUBECTL');
  });
});
