// @local-components: the demo starts them itself.
// Runs `npm run demo` with its arguments, as a user does, in a state folder of its own; returns its output.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export async function runDemo(...args: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-demo-test-'));
  try {
    const { stdout } = await exec(
      'npm',
      ['run', '--silent', 'demo', ...(args.length ? ['--', ...args] : [])],
      {
        env: { ...process.env, SLUICE_DEMO_DIR: dir },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
