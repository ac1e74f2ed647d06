import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import { poll, systemClock } from '../functions/core/clock.ts';

/** Starts a long-running server in its own process group, logging to `logFile`; returns its pid. */
export function startDaemon(
  command: string,
  args: readonly string[],
  logFile: string,
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string } = {},
): number {
  const log = openSync(logFile, 'a');
  const child = spawn(command, args, {
    detached: true,
    stdio: ['ignore', log, log],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  // Recorded at once, beside its log: a start killed before the daemon is ready leaves it listed.
  appendFileSync(join(dirname(logFile), SPAWNED), `${child.pid} ${command}\n`);
  return child.pid;
}

const SPAWNED = 'spawned.pids';

/**
 * Stops every daemon startDaemon started with its log in `dir` that is still running the same
 * command (a pid since taken by another program is left alone), and forgets them. Returns their
 * commands.
 */
export async function stopSpawnedIn(dir: string): Promise<string[]> {
  const file = join(dir, SPAWNED);
  if (!existsSync(file)) return [];
  const stopped: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [pid, ...rest] = line.split(' ');
    const command = rest.join(' ');
    if (isAlive(Number(pid)) && commandOf(Number(pid)) === command) {
      await stopDaemon(Number(pid));
      stopped.push(command);
    }
  }
  rmSync(file, { force: true });
  return stopped;
}

/** The program a process runs (the first word of /proc/<pid>/cmdline), or undefined. */
function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a daemon started by startDaemon: SIGTERM to its process group, SIGKILL after `graceMs`. */
export async function stopDaemon(pid: number, graceMs = 5_000): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  signal('SIGTERM');
  await poll({ clock: systemClock, every: 50, timeout: graceMs, until: async () => !isAlive(pid) });
  if (isAlive(pid)) signal('SIGKILL');
}

/** A port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Runs `start` (which picks its ports with freePort) again, on new ports, when another process
 * bound one of them between the pick and the component's own bind: on a busy machine that race
 * is real. Any other failure is thrown at once.
 */
export async function onFreshPortsIfTaken<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      const taken = /address already in use|EADDRINUSE/i.test(String(error));
      if (!taken || attempt >= attempts) throw error;
    }
  }
}

/**
 * Polls `ready` until it returns true; fails naming the component, with the tail of its log,
 * if its process dies or the time runs out (stopping it then).
 */
export async function waitUntilReady({
  name,
  pid,
  logFile,
  ready,
  timeoutMs = 60_000,
}: {
  /** Names the component in errors. */
  readonly name: string;
  readonly pid: number;
  /** Its log, whose last lines an error shows. */
  readonly logFile: string;
  readonly ready: () => Promise<boolean>;
  readonly timeoutMs?: number;
}): Promise<void> {
  const tail = () => readFileSync(logFile, 'utf8').trim().split('\n').slice(-12).join('\n');
  const started = await poll({
    clock: systemClock,
    every: 200,
    timeout: timeoutMs,
    until: async () => {
      if (await ready().catch(() => false)) return true;
      if (!isAlive(pid))
        throw new Error(`${name} exited during start-up; last lines of ${logFile}:\n${tail()}`);
      return false;
    },
  });
  if (!started) {
    const lines = tail();
    await stopDaemon(pid); // what was started here is stopped here: nobody else has its pid
    throw new Error(`${name} was not ready within ${timeoutMs / 1000}s; last lines of ${logFile}:\n${lines}`);
  }
}

/**
 * Waits for every start, then throws the first failure: Promise.all would throw while the others
 * are still starting, and what they start would be left running with nobody holding its pid.
 */
export async function allStarted<T extends readonly unknown[]>(starts: {
  readonly [K in keyof T]: Promise<T[K]>;
}): Promise<T> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
