import type { Components } from '../dev/components.ts';
import { auditWindow, isWrite, type AuditedRequest } from './audit.ts';
import { cpuMeter, ownCpuSeconds } from './cpu.ts';

/** What one measured piece of work cost. */
export interface Measured<T> {
  readonly result: T;
  readonly ms: number;
  /** The API requests it made, from the audit log. */
  readonly requests: readonly AuditedRequest[];
  readonly writes: number;
  /** CPU seconds kube-apiserver and etcd spent meanwhile. */
  readonly serverCpu: number;
  /** CPU seconds this process spent meanwhile. */
  readonly ownCpu: number;
}

/** Runs `work`, timing it and counting the API server's requests and CPU. */
export async function measure<T>(components: Components, work: () => Promise<T>): Promise<Measured<T>> {
  const audit = auditWindow(components);
  const cpu = cpuMeter({ apiserver: components.pids.kubeApiserver!, etcd: components.pids.etcd! });
  const ownBefore = ownCpuSeconds();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  const ownCpu = ownCpuSeconds() - ownBefore;
  const server = cpu.stop();
  const requests = audit.stop();
  return {
    result,
    ms,
    requests,
    writes: requests.filter(isWrite).length,
    serverCpu: server.apiserver! + server.etcd!,
    ownCpu,
  };
}
