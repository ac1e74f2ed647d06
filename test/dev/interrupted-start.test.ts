// @local-components: `sluice dev up` starts them.
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
const spawnedFile = join(cwd, '.sluice', 'dev', 'spawned.pids');
const devCommand = (action: 'up' | 'down') => exec(process.execPath, [CLI, 'dev', action], { cwd });

afterAll(async () => {
  await devCommand('down');
  rmSync(cwd, { recursive: true, force: true });
});

/** The daemons a start spawned, once it spawned at least one and before it finished. */
async function killedHalfway(): Promise<number[]> {
  const child = spawn(process.execPath, [CLI, 'dev', 'up'], { cwd, stdio: 'ignore' });
  const exited = new Promise((done) => child.once('exit', done));
  for (;;) {
    const spawned = existsSync(spawnedFile)
      ? readFileSync(spawnedFile, 'utf8').split('\n').filter(Boolean)
      : [];
    if (spawned.length > 0 && !existsSync(state)) {
      child.kill('SIGKILL');
      await exited;
      // Read again: a daemon spawned between the read and the kill is left behind too.
      return readFileSync(spawnedFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => Number(line.split(' ')[0]));
    }
    if (child.exitCode !== null) throw new Error('sluice dev up finished before it could be interrupted');
    await new Promise((tick) => setTimeout(tick, 20));
  }
}

describe('sluice dev up after an interrupted start', () => {
  it('stops what the interrupted start left running, says so, and starts the components', async () => {
    const spawned = await killedHalfway();
    const running = spawned.filter(isAlive);
    expect(running.length).toBeGreaterThan(0);

    const { stdout } = await devCommand('up');
    expect(stdout).toMatch(/^stopped .+, left running by an earlier start or stop$/m);
    for (const pid of spawned) expect(isAlive(pid), `process ${pid} of the killed start`).toBe(false);
    expect(stdout).toContain('local components up in');
    expect(JSON.parse(readFileSync(state, 'utf8'))).toHaveProperty('kube');
  }, 600_000); // two starts of every component, on a machine that may be busy
});
