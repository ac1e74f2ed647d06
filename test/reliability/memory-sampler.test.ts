// The invariant soak's memory sampler (watchMemory, test/support/invariants.ts) reports a blow-up
// that happens on a blocked event loop: in a child process that allocates synchronously past the
// limit, the sampler's thread prints `[bounded-memory] VIOLATED: <context>` and ends the process,
// as the bounded-time watchdog does for a stall; growth under the limit ends nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'sluice-memory-sampler-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a child that watches its memory (limit 64 MiB) and then allocates `mib` MiB without yielding. */
async function allocate(
  mib: number,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const script = join(dir, `allocate-${mib}.mts`);
  writeFileSync(
    script,
    `import { watchMemory } from ${JSON.stringify(join(ROOT, 'test', 'support', 'invariants.ts'))};
const watch = await watchMemory('seed 7, planted: allocate ${mib} MiB', 64);
const kept: Buffer[] = [];
for (let i = 0; i < ${mib}; i++) kept.push(Buffer.alloc(1 << 20, 1));
// Still blocked, holding it all: only the sampler's thread can act now.
for (const until = Date.now() + 3000; Date.now() < until; );
const { peakMib } = await watch.stop();
process.stdout.write('peak ' + peakMib + ' MiB of ' + kept.length + '\\n');
`,
  );
  // One process (tsx as a loader, not its CLI, which would run the script in a child of its own).
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

describe('the memory sampler thread', () => {
  it('prints the bounded-memory violation with its context and ends a process blocked past the limit', async () => {
    const result = await allocate(256);
    expect(result.stderr).toMatch(
      /\[bounded-memory\] VIOLATED: seed 7, planted: allocate 256 MiB: the process tree grew by \d+ MiB \(limit 64 MiB\)/,
    );
    expect(result.signal).toBe('SIGKILL');
  }, 120_000);

  it('lets a process that stays under the limit finish', async () => {
    const result = await allocate(8);
    expect(result.stderr).not.toContain('VIOLATED');
    expect(result.code).toBe(0);
  }, 120_000);
});
