import { accessSync, constants } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot, MissingComponentError } from './provision.ts';
import { NOTATION_VERSION } from './versions.ts';

const here = dirname(fileURLToPath(import.meta.url));

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The notation CLI, built once from its Go module (github.com/notaryproject/notation at
 * NOTATION_VERSION) into the cache, as the other Go components are; fails loudly, saying why, when
 * Go or the module proxy is missing.
 */
export function notationBinary(): string {
  const dir = join(cacheRoot(), `notation-${NOTATION_VERSION}`);
  const binary = join(dir, 'notation');
  if (isExecutable(binary)) return binary;
  const module = `github.com/notaryproject/notation@${NOTATION_VERSION}`;
  if (spawnSync('sh', ['-c', 'command -v go']).status !== 0)
    throw new MissingComponentError(
      `the notation CLI is not cached in ${dir}, and Go is not installed to build it from the module ${module}. Install Go (1.24 or later) and run again.`,
    );
  process.stderr.write(
    `[sluice testbed] building notation from the Go module ${module} into ${dir} (first run only)\n`,
  );
  const build = spawnSync('bash', [join(here, 'build-notation.sh'), dir, NOTATION_VERSION], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (build.status !== 0 || !isExecutable(binary)) {
    const tail = `${build.stdout}\n${build.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new MissingComponentError(
      `building notation from the Go module ${module} failed (exit ${build.status}); the Go module proxy must be reachable. Last output:\n${tail}`,
    );
  }
  return binary;
}
