import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { cpus, totalmem } from 'node:os';
import type { Components } from '../dev/components.ts';

let ticks: number | undefined;

/** Clock ticks per second of /proc CPU times (`getconf CLK_TCK`, 100 on Linux). */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kubeApiserver: string;
  readonly kubectl: string;
  readonly commit: string;
  readonly date: string;
}

function run(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

function cpuModel(): string {
  const fromProc = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
  return fromProc ?? cpus()[0]?.model ?? 'unknown';
}

/** The API server's own `gitVersion` (GET /version). */
function apiServerVersion(components: Components): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      `${components.kube.server}/version`,
      {
        ca: readFileSync(components.kube.caFile),
        headers: { authorization: `Bearer ${components.kube.token}` },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          try {
            resolve((JSON.parse(body) as { gitVersion: string }).gitVersion);
          } catch {
            resolve('unknown');
          }
        });
      },
    );
    req.on('error', () => resolve('unknown'));
    req.end();
  });
}

/** The machine and the versions of everything measured: the header of docs/benchmarks.md. */
export async function describeMachine(components: Components): Promise<Machine> {
  const kubectlVersion = run(components.kubectl, ['version', '--client', '-o', 'json']);
  let kubectl = 'unknown';
  try {
    kubectl = (JSON.parse(kubectlVersion) as { clientVersion: { gitVersion: string } }).clientVersion
      .gitVersion;
  } catch {
    // keep 'unknown'
  }
  const commit = run('git', ['rev-parse', '--short=12', 'HEAD']);
  const dirty = run('git', ['status', '--porcelain', '--untracked-files=no']) !== '';
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kubeApiserver: await apiServerVersion(components),
    kubectl,
    commit: dirty ? `${commit} (with uncommitted changes)` : commit,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}
