// Running kubectl kustomize: its limits, and a missing binary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SluiceError } from '../../../functions/core/errors.ts';
import { runKustomize } from '../../../functions/core/manifests/kustomize.ts';
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

  it('finds a bare "kubectl" on PATH as documented, though kustomize itself runs with an empty PATH', async () => {
    const dir = kustomizationDir();
    const previous = process.env.PATH;
    process.env.PATH = ['relative/bin', '/nonexistent', dirname(kubectl())].join(':');
    try {
      const output = await runKustomize(
        dir,
        { kubectl: 'kubectl', timeoutMs: 30_000 },
        { home: dir, hide: dir, as: '' },
      );
      expect(output).toContain('kind: ConfigMap');
    } finally {
      process.env.PATH = previous;
    }
  });

  it('says kubectl is neither at the name given nor on PATH when PATH has none', async () => {
    const dir = kustomizationDir();
    const previous = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const error = await failure(
        runKustomize(dir, { kubectl: 'kubectl', timeoutMs: 30_000 }, { home: dir, hide: dir, as: '' }),
      );
      expect(error.message).toContain('kubectl not found at "kubectl" nor on PATH: set SLUICE_KUBECTL');
    } finally {
      process.env.PATH = previous;
    }
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
