import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { componentsEnv, startComponents, stopComponents, type Components } from '../dev/components.ts';

/** The local components a bench run owns: started in a temp dir, stopped by process id at the end. */
export interface BenchBed {
  readonly components: Components;
  readonly dir: string;
  stop(): Promise<void>;
}

/**
 * Starts the test bed's components (kube-apiserver + etcd, registry, DynamoDB Local, ECR endpoint)
 * in a fresh temp dir and points this process's AWS SDK and kubectl at them.
 */
export async function startBenchBed(): Promise<BenchBed> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const components = await startComponents(dir);
  Object.assign(process.env, componentsEnv(components));
  return {
    components,
    dir,
    async stop() {
      await stopComponents(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
