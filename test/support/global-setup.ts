import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startComponents, stopComponents, type Components } from '../../dev/components.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    components: Components;
  }
}

/**
 * Starts the real local components once for the whole run and stops them afterwards. A component
 * that cannot be had fails the run here, with the reason: integration tests never skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-testbed-'));
  const started = Date.now();
  const components = await startComponents(dir);
  process.stderr.write(
    `[sluice testbed] components up in ${((Date.now() - started) / 1000).toFixed(1)}s (${dir})\n`,
  );
  project.provide('components', components);
  return async () => {
    await stopComponents(dir);
    rmSync(dir, { recursive: true, force: true });
  };
}
