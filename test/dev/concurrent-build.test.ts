import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const devDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../dev');

/**
 * A stand-in for `go` that only records its builds: `go build -o OUT` writes OUT after waiting (up
 * to 5 s) for a second build to be recorded, so two unserialised builds always overlap and both
 * record; any other subcommand does nothing. What is tested is the script's turn-taking, not Go.
 */
const FAKE_GO = `#!/usr/bin/env bash
log="$FAKE_GO_LOG"
if [ "$1" = build ]; then
  out=""; prev=""
  for arg in "$@"; do [ "$prev" = "-o" ] && out="$arg"; prev="$arg"; done
  echo "build $out" >> "$log"
  for _ in $(seq 50); do [ "$(grep -c '^build' "$log")" -ge 2 ] && break; sleep 0.1; done
  printf '#!/bin/sh\\n' > "$out"; chmod +x "$out"
fi
exit 0
`;

function runScript(script: string, out: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((done) => {
    const child = spawn('bash', [join(devDir, script), out, 'v0.0.0'], { env, stdio: 'ignore' });
    child.on('exit', (code) => done(code));
  });
}

describe('building a component on a first run', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it.each(['build-local-kms.sh', 'build-lambda-rie.sh'])(
    '%s: two first runs at once build once, and both find the binary',
    async (script) => {
      const root = mkdtempSync(join(tmpdir(), 'sluice-build-race-'));
      dirs.push(root);
      const fakeBin = join(root, 'bin');
      const log = join(root, 'go.log');
      const out = join(root, 'cache');
      writeFileSync(log, '');
      mkdirSync(fakeBin);
      writeFileSync(join(fakeBin, 'go'), FAKE_GO);
      chmodSync(join(fakeBin, 'go'), 0o755);
      const env = { ...process.env, PATH: `${fakeBin}:${process.env.PATH}`, FAKE_GO_LOG: log };
      if (script === 'build-lambda-rie.sh') {
        // The script builds inside the module folder `go mod download -json` names.
        const moduleDir = join(root, 'module');
        mkdirSync(join(moduleDir, 'cmd/aws-lambda-rie'), { recursive: true });
        writeFileSync(
          join(fakeBin, 'go'),
          FAKE_GO.replace(
            'exit 0\n',
            `[ "$1 $2" = "mod download" ] && printf '  "Dir": "${moduleDir}",\\n'\nexit 0\n`,
          ),
        );
      }
      const codes = await Promise.all([runScript(script, out, env), runScript(script, out, env)]);
      expect(codes).toEqual([0, 0]);
      const builds = readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('build'));
      expect(builds).toHaveLength(1);
      const binary = script === 'build-local-kms.sh' ? 'local-kms' : 'aws-lambda-rie';
      expect(existsSync(join(out, binary))).toBe(true);
    },
  );
});
