import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Components } from '../../dev/components.ts';
import { freePort, startDaemon, stopDaemon, waitUntilReady } from '../../dev/processes.ts';
import { kubectl } from '../kubectl.ts';
import type { FluxBinaries } from './provision.ts';

/** Flux's controllers running out of cluster against the bench's API server, on 127.0.0.1. */
export interface FluxControllers {
  readonly namespace: string;
  /** The docker-config Secret the OCIRepositories use to reach the local registry. */
  readonly registrySecret: string;
  readonly pids: { readonly sourceController: number; readonly kustomizeController: number };
  stop(): Promise<void>;
  /** Resolves once neither controller has work queued or in progress (their workqueue metrics). */
  idle(): Promise<void>;
  /** Starts both controllers again (after stop), with `concurrency` workers or their defaults. */
  restart(concurrency: number | undefined): Promise<FluxControllers>;
}

export const FLUX_NAMESPACE = 'flux-system';
/** Both controllers' workers: the same bound the sluice side gets in the many-deliveries case. */
export const FLUX_CONCURRENCY = 10;

/** The user agents Flux's controllers send, to tell their requests apart in the audit log. */
export const isFluxRequest = (userAgent: string) => /^(source|kustomize)-controller\//.test(userAgent);

/**
 * Installs Flux's CRDs, a namespace and a registry Secret, then starts source-controller (artifact
 * storage served on 127.0.0.1) and kustomize-controller with the bench's kubeconfig, leader
 * election off and FLUX_CONCURRENCY workers; waits until both report healthy.
 */
export async function startFlux(
  components: Components,
  binaries: FluxBinaries,
  dir: string,
  kubectlCache: string,
): Promise<FluxControllers> {
  const registrySecret = await installFlux(components, binaries, kubectlCache);
  return startControllers(components, binaries, dir, registrySecret, FLUX_CONCURRENCY);
}

/** Flux's CRDs, its namespace and the registry Secret; returns the Secret's name. */
async function installFlux(components: Components, binaries: FluxBinaries, kubectlCache: string) {
  const run = (args: string[]) => kubectl(components, args, kubectlCache);
  await run(['apply', '--server-side', '-f', binaries.crdDir]);
  await run(['wait', '--for=condition=Established', '--timeout=60s', '-f', binaries.crdDir]);
  await run(['create', 'namespace', FLUX_NAMESPACE]);
  const registrySecret = 'registry';
  await run([
    'create',
    'secret',
    'docker-registry',
    registrySecret,
    '-n',
    FLUX_NAMESPACE,
    `--docker-server=${components.registry.host}`,
    `--docker-username=${components.registry.username}`,
    `--docker-password=${components.registry.password}`,
  ]);
  return registrySecret;
}

/**
 * Starts both controllers with `concurrency` workers each (`--concurrent`; undefined: each
 * controller's own default) and waits until both report healthy.
 */
export async function startControllers(
  components: Components,
  binaries: FluxBinaries,
  dir: string,
  registrySecret: string,
  concurrency: number | undefined,
): Promise<FluxControllers> {
  const env = { ...process.env, KUBECONFIG: components.kube.kubeconfig, RUNTIME_NAMESPACE: FLUX_NAMESPACE };
  const storage = join(dir, 'flux-storage');
  mkdirSync(storage, { recursive: true });
  const [storagePort, sourceHealth, sourceMetrics, kustomizeHealth, kustomizeMetrics] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const common = [
    '--enable-leader-election=false',
    '--log-level=error',
    ...(concurrency === undefined ? [] : [`--concurrent=${concurrency}`]),
  ];
  const sourceLog = join(dir, 'source-controller.log');
  const sourceController = startDaemon(
    binaries.sourceController,
    [
      ...common,
      `--storage-path=${storage}`,
      `--storage-addr=127.0.0.1:${storagePort}`,
      `--storage-adv-addr=127.0.0.1:${storagePort}`,
      `--health-addr=127.0.0.1:${sourceHealth}`,
      `--metrics-addr=127.0.0.1:${sourceMetrics}`,
    ],
    sourceLog,
    { env },
  );
  const kustomizeLog = join(dir, 'kustomize-controller.log');
  const kustomizeController = startDaemon(
    binaries.kustomizeController,
    [...common, `--health-addr=127.0.0.1:${kustomizeHealth}`, `--metrics-addr=127.0.0.1:${kustomizeMetrics}`],
    kustomizeLog,
    { env },
  );
  const healthy = (port: number) => async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
  await waitUntilReady({
    name: 'source-controller',
    pid: sourceController,
    logFile: sourceLog,
    ready: healthy(sourceHealth!),
  });
  await waitUntilReady({
    name: 'kustomize-controller',
    pid: kustomizeController,
    logFile: kustomizeLog,
    ready: healthy(kustomizeHealth!),
  });
  return {
    namespace: FLUX_NAMESPACE,
    registrySecret,
    pids: { sourceController, kustomizeController },
    async stop() {
      await stopDaemon(kustomizeController);
      await stopDaemon(sourceController);
    },
    idle: () => waitForIdle([sourceMetrics!, kustomizeMetrics!]),
    restart: (workers) => startControllers(components, binaries, dir, registrySecret, workers),
  };
}

/** Peak resident memory of a process (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * Waits until every workqueue of the controllers serving metrics on `ports` is empty and no worker
 * is busy (controller-runtime's `workqueue_depth` and `controller_runtime_active_workers`).
 */
async function waitForIdle(ports: readonly number[], timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const busy = (metrics: string) =>
    metrics
      .split('\n')
      .filter((line) => /^(workqueue_depth|controller_runtime_active_workers)\{/.test(line))
      .some((line) => Number(line.slice(line.lastIndexOf(' ') + 1)) > 0);
  for (;;) {
    const texts = await Promise.all(
      ports.map(async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
    );
    if (!texts.some(busy)) return;
    if (Date.now() > deadline) throw new Error(`Flux's controllers still busy after ${timeoutMs / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
