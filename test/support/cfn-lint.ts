// @local-components: cfn-lint is provisioned into a cached virtualenv (dev/provision.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot, MissingComponentError } from '../../dev/provision.ts';

/** The pinned cfn-lint release; its dependencies are pinned beside it in cfn-lint-requirements.txt. */
export const CFN_LINT_VERSION = '1.58.0';
const REQUIREMENTS = join(dirname(fileURLToPath(import.meta.url)), 'cfn-lint-requirements.txt');

/** A problem cfn-lint found in a template. */
export interface CfnLintMatch {
  readonly Level: 'Error' | 'Warning' | 'Informational';
  readonly Message: string;
  readonly Rule: { readonly Id: string };
  readonly Location: { readonly Path: readonly (string | number)[] };
  readonly Filename: string;
}

/**
 * cfn-lint from PyPI in a virtual environment cached by version (outside the repo), made with the
 * machine's python3 on first use; returns the environment's python, which runs cfn-lint's entry point
 * (the environment is made elsewhere and moved into place, so its scripts' shebangs are stale).
 * Throws MissingComponentError saying what is missing when it cannot be had.
 */
export function cfnLintPython(): string {
  const dir = join(cacheRoot(), `cfn-lint-${CFN_LINT_VERSION}`);
  const binary = join(dir, 'bin', 'python');
  if (existsSync(binary)) return binary;
  const python = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim();
  if (!python)
    throw new MissingComponentError(
      `cfn-lint ${CFN_LINT_VERSION} is not cached in ${dir}, and python3 is not installed to make its virtual environment: install python3 (with venv, Debian's python3-venv) and run again.`,
    );
  process.stderr.write(
    `[sluice testbed] installing cfn-lint ${CFN_LINT_VERSION} from PyPI into ${dir} (first run only)\n`,
  );
  mkdirSync(cacheRoot(), { recursive: true });
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const run = (command: string, args: string[], what: string) => {
    const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    if (result.status !== 0) {
      rmSync(staging, { recursive: true, force: true });
      const detail = `${result.stderr ?? ''}${result.error ? String(result.error) : ''}`
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ');
      throw new MissingComponentError(
        `cfn-lint ${CFN_LINT_VERSION} could not be installed (${what}): ${detail}`,
      );
    }
  };
  run(python, ['-m', 'venv', staging], `${python} -m venv; on Debian install python3-venv`);
  run(
    join(staging, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', '--no-deps', '-r', REQUIREMENTS],
    `pip install -r ${REQUIREMENTS}: PyPI must be reachable`,
  );
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another process made it meanwhile.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(binary)) throw error;
  }
  return binary;
}

/** Runs cfn-lint on the templates; every match, of every level. */
export function cfnLint(templates: readonly string[]): CfnLintMatch[] {
  const main = 'import sys; from cfnlint.runner import main; sys.argv[0] = "cfn-lint"; sys.exit(main())';
  const result = spawnSync(cfnLintPython(), ['-c', main, '--format', 'json', '--', ...templates], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  // Exit codes are a bit mask of the levels found (2 errors, 4 warnings, 8 informational); 1 is a crash.
  if (result.status === null || (result.status & 1) === 1 || !result.stdout.trim().startsWith('['))
    throw new Error(`cfn-lint did not run on ${templates.join(', ')}: ${result.stderr || result.stdout}`);
  return JSON.parse(result.stdout) as CfnLintMatch[];
}

/** `Error E3012 Resources/Foo/Properties/Bar: message (file)` */
export const describeMatch = (match: CfnLintMatch): string =>
  `${match.Level} ${match.Rule.Id} ${match.Location.Path.join('/')}: ${match.Message} (${match.Filename})`;

export const readTemplate = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));
