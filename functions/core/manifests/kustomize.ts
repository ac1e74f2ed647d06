import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { SluiceError } from '../errors.ts';
import { DEFAULT_BUILD_LIMITS } from '../limits.ts';
import { formatBytes } from '../limits.ts';

/** How to run `kubectl kustomize`: the binary (kustomize is built into kubectl) and its limits. */
export interface KustomizeOptions {
  /** `/opt/kubectl/kubectl` in Lambda (the kubectl layer), `kubectl` on PATH elsewhere. */
  readonly kubectl: string;
  readonly timeoutMs: number;
  /** The built YAML may not be larger than this (default: the limit maxManifestBytes). */
  readonly maxOutputBytes?: number;
  /** The built YAML may not hold more objects than this (default: the limit maxObjects). */
  readonly maxObjects?: number;
  /** kustomize is killed once its resident memory is larger than this (default 512 MiB). */
  readonly maxMemoryBytes?: number;
}

export const DEFAULT_KUSTOMIZE_MEMORY_BYTES = 512 * 1024 * 1024;
/** How often the child's resident memory is read from /proc. */
const MEMORY_POLL_MS = 10;
/** Where the child's proxies point: the discard port on loopback, where nothing listens. */
const UNREACHABLE_PROXY = 'http://127.0.0.1:9';

/**
 * The child's whole environment: no credentials, no kubeconfig, an empty HOME, a PATH with no
 * git (kustomize fetches remote bases with git), git told to allow no protocol and to read no
 * config, every proxy variable pointing at a closed loopback port, and GOMEMLIMIT at 3/4 of the cap.
 */
export function kustomizeEnvironment(home: string, maxMemoryBytes: number): NodeJS.ProcessEnv {
  const proxies = Object.fromEntries(
    ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY'].flatMap((name) => [
      [name, UNREACHABLE_PROXY],
      [name.toLowerCase(), UNREACHABLE_PROXY],
    ]),
  );
  return {
    PATH: join(home, 'no-bin'),
    HOME: home,
    ...proxies,
    NO_PROXY: '',
    no_proxy: '',
    GIT_ALLOW_PROTOCOL: 'sluice-none',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GOMEMLIMIT: `${Math.floor((maxMemoryBytes * 3) / 4 / 1024 / 1024)}MiB`,
  };
}

const MAX_STDERR_BYTES = 64 * 1024;
const MAX_MESSAGE_CHARS = 2000;

/** Where a build runs: `home` is kubectl's HOME; `hide` is replaced by `as` in kustomize's messages. */
export interface BuildPlace {
  readonly home: string;
  readonly hide: string;
  readonly as: string;
  /** The kustomization being built, for messages (`overlays/prod/kustomization.yaml`). */
  readonly building?: string;
}

/**
 * `kubectl kustomize <dir>`: the built YAML. A failure throws BuildFailed with kustomize's own
 * message, its temp paths replaced so they read as in the artifact. kubectl gets PATH and a
 * private HOME only: no AWS credentials, no kubeconfig.
 */
export async function runKustomize(
  dir: string,
  options: KustomizeOptions,
  place: BuildPlace,
): Promise<string> {
  const maxOutput = options.maxOutputBytes ?? DEFAULT_BUILD_LIMITS.maxManifestBytes;
  const maxMemory = options.maxMemoryBytes ?? DEFAULT_KUSTOMIZE_MEMORY_BYTES;
  const home = await mkdtemp(join(place.home, 'home-'));
  const child = spawn(options.kubectl, ['kustomize', dir], {
    env: kustomizeEnvironment(home, maxMemory),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let outputBytes = 0;
  let stderrBytes = 0;
  let stopped: string | undefined;
  const stop = (why: string) => {
    stopped ??= why;
    child.kill('SIGKILL');
  };
  child.stdout.on('data', (chunk: Buffer) => {
    outputBytes += chunk.length;
    if (outputBytes > maxOutput)
      stop(`its output is larger than the limit of ${formatBytes(maxOutput)} (maxManifestBytes)`);
    else stdout.push(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderrBytes < MAX_STDERR_BYTES) stderr.push(chunk);
    stderrBytes += chunk.length;
  });
  const timer = setTimeout(
    () => stop(`it did not finish within ${options.timeoutMs / 1000}s`),
    options.timeoutMs,
  );
  const watchdog = setInterval(() => {
    const rss = child.pid === undefined ? 0 : residentBytes(child.pid);
    if (rss > maxMemory)
      stop(
        `kustomize used more than ${Math.round(maxMemory / 1024 / 1024)} MiB building ${place.building ?? dir}`,
      );
  }, MEMORY_POLL_MS);
  const code = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  })
    .catch((error: NodeJS.ErrnoException) => {
      const hint =
        error.code === 'ENOENT'
          ? ` (kubectl not found at "${options.kubectl}"${options.kubectl.includes('/') ? '' : ' (the build runs with an empty PATH: give a path)'}: set SLUICE_KUBECTL to a kubectl binary, which carries kustomize)`
          : '';
      throw new SluiceError('BuildFailed', `cannot run kustomize: ${error.message}${hint}`, { cause: error });
    })
    .finally(() => {
      clearTimeout(timer);
      clearInterval(watchdog);
    });

  if (stopped?.startsWith('kustomize used')) throw new SluiceError('BuildFailed', stopped);
  if (stopped) throw new SluiceError('BuildFailed', `kubectl kustomize was stopped: ${stopped}`);
  if (code !== 0) {
    const message = cleanMessage(Buffer.concat(stderr).toString('utf8'), place);
    throw new SluiceError('BuildFailed', message || `kubectl kustomize exited with code ${code}`);
  }
  return Buffer.concat(stdout).toString('utf8');
}

/**
 * `command` itself when it is a path (holds a `/`), else the first executable file of that name in
 * the directories of `path` (as a shell finds it), else `command` unchanged (spawn then fails with
 * ENOENT, reported as kubectl not found).
 */
export function commandOnPath(command: string, path: string | undefined): string {
  if (command.includes('/')) return command;
  for (const dir of (path ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue; // a relative PATH entry would depend on the build's cwd
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return command;
}

/** VmRSS of a running process, 0 once it is gone. */
function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function cleanMessage(stderr: string, place: BuildPlace): string {
  const message = stderr
    .split(place.hide + sep)
    .join(place.as)
    .split(place.hide)
    .join(place.as.replace(/\/$/, '') || '.')
    .split('\n')
    .map((line) => line.replace(/^error: /, '').trimEnd())
    .filter((line) => line !== '')
    .join('\n');
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
}

/** Runs `work` in a private temp dir that is removed afterwards, whether `work` succeeds or not. */
export async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-build-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes `files` (relative path → content) under `root`, refusing any path that would leave it. */
export async function writeTree(
  root: string,
  files: Iterable<readonly [string, string | Buffer]>,
): Promise<void> {
  const base = resolve(root);
  for (const [path, content] of files) {
    const target = resolve(base, path);
    if (!target.startsWith(base + sep)) {
      throw new SluiceError(
        'BuildFailed',
        `artifact file "${path}" would be written outside the build directory`,
      );
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}
