import { join } from 'node:path';
import { freePort, startDaemon, waitUntilReady } from './processes.ts';

export interface Etcd {
  readonly pid: number;
  readonly url: string;
}

/** etcd on 127.0.0.1 with its data in `dir` (fsync off: test data only). */
export async function startEtcd(binary: string, dir: string): Promise<Etcd> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const log = join(dir, 'etcd.log');
  const pid = startDaemon(
    binary,
    [
      '--name=sluice',
      `--data-dir=${join(dir, 'etcd-data')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=sluice=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    log,
  );
  await waitUntilReady({
    name: 'etcd',
    pid,
    logFile: log,
    ready: async () => (await fetch(`${url}/health`)).ok,
  });
  return { pid, url };
}
