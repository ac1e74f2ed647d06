import { spawn } from 'node:child_process';
import type { Components } from '../dev/components.ts';

export interface KubectlRun {
  readonly ms: number;
  readonly stdout: string;
}

/**
 * Runs the layer package's kubectl against the bed with `cacheDir` as its discovery cache (warm
 * it first with `kubectl api-resources` so kubectl is timed at its best); fails on a non-zero exit.
 */
export function kubectl(
  components: Components,
  args: readonly string[],
  cacheDir: string,
): Promise<KubectlRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(components.kubectl, [`--kubeconfig=${components.kube.kubeconfig}`, ...args], {
      env: { ...process.env, KUBECACHEDIR: cacheDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ ms: performance.now() - started, stdout });
      else reject(new Error(`kubectl ${args.join(' ')} exited ${code}: ${stderr.trim().slice(-2000)}`));
    });
  });
}
