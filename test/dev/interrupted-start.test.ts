// `sluice dev up` after a start that was killed half-way: the processes that start left behind
// (recorded in components.json as they started) are stopped and named, and the components come up.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../dev/processes.ts';

const exec = promisify(execFile);
const CLI = join(import.meta.dirname, '..', '..', 'bin', 'sluice-cli.mjs');
const cwd = mkdtempSync(join(tmpdir(), 'sluice-dev-up-'));
const state = join(cwd, '.sluice', 'dev', 'components.json');
const devCommand = (action: 'up' | 'down') => exec(process.execPath, [CLI, 'dev', action], { cwd });

afterAll(async () => {
  await devCommand('down');
  rmSync(cwd, { recursive: true, force: true });
});

/** The processes a start recorded so far, once it recorded at least one and before it finished. */
async function killedHalfway(): Promise<Record<string, number>> {
  const child = spawn(process.execPath, [CLI, 'dev', 'up'], { cwd, stdio: 'ignore' });
  const exited = new Promise((done) => child.once('exit', done));
  for (;;) {
    const recorded = existsSync(state)
      ? (JSON.parse(readFileSync(state, 'utf8')) as { starting?: true; pids: Record<string, number> })
      : undefined;
    if (recorded?.starting && Object.keys(recorded.pids).length > 0) {
      child.kill('SIGKILL');
      await exited;
      return recorded.pids;
    }
    if (child.exitCode !== null) throw new Error('sluice dev up finished before it could be interrupted');
    await new Promise((tick) => setTimeout(tick, 20));
  }
}

describe('sluice dev up after an interrupted start', () => {
  it('stops what the interrupted start left running, says so, and starts the components', async () => {
    const left = await killedHalfway();
    const running = Object.entries(left).filter(([, pid]) => isAlive(pid));
    expect(running.length).toBeGreaterThan(0);
    // Every daemon the start spawned, recorded or still coming up when it was killed.
    const spawned = readFileSync(join(cwd, '.sluice', 'dev', 'spawned.pids'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => Number(line.split(' ')[0]));
    expect(spawned.length).toBeGreaterThanOrEqual(running.length);

    const { stdout } = await devCommand('up');
    expect(stdout).toMatch(/^stopped .+, left running by an earlier start or stop$/m);
    for (const [name] of running) expect(stdout).toContain(name);
    for (const pid of spawned) expect(isAlive(pid), `process ${pid} of the killed start`).toBe(false);
    expect(stdout).toContain('local components up in');
    expect(JSON.parse(readFileSync(state, 'utf8'))).toHaveProperty('kube');
  }, 600_000); // two starts of every component, on a machine that may be busy
});
