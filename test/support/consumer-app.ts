// A user's CDK app, outside the repository: the package as `npm pack` makes it (its prepack script
// builds dist/), installed from the tarball next to aws-cdk-lib and constructs from the registry,
// with the README's example as its app. Shaped like `cdk init app --language typescript`: a
// CommonJS package, TypeScript with module NodeNext.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';

const exec = promisify(execFile);

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly devDependencies: Readonly<Record<string, string>>;
}

export const PACKAGE = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as PackageJson;

/** A tool the consumer has as a devDependency (tsc, tsx, ts-node, cdk): the repository's pinned one. */
export function devTool(name: string): string {
  return join(PROJECT_ROOT, 'node_modules', '.bin', name);
}

/** What `npm pack --json` says of the tarball. */
export interface Packed {
  readonly filename: string;
  readonly size: number;
  readonly entryCount: number;
  readonly files: readonly { readonly path: string; readonly size: number }[];
}

export interface ConsumerApp {
  readonly dir: string;
  readonly packed: Packed;
  /** The installed package, `node_modules/<name>`. */
  readonly installed: string;
  remove(): void;
}

/** The fenced `lang` code blocks of the README section under `## heading`, in order. */
export function readmeCodeBlocks(heading: string, lang: string): string[] {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no section "## ${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
}

/** The README's example app, the one `ts` block of "Use it in your CDK app". */
export function readmeExample(): string {
  const [example, ...more] = readmeCodeBlocks('Use it in your CDK app', 'ts');
  if (!example || more.length > 0)
    throw new Error('README.md "Use it in your CDK app" must hold exactly one ts block');
  return example;
}

/** `cdk init`'s tsconfig.json, compiling to build/ (types only from the app's own imports). */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['es2022'],
    strict: true,
    skipLibCheck: true,
    types: [],
    rootDir: '.',
    outDir: 'build',
  },
  exclude: ['node_modules', 'cdk.out', 'build'],
};

/**
 * Not the README's: checks that the package's declarations are types, not `any` (were they, the
 * `@ts-expect-error` would be unused, itself an error), for the construct and for `<name>/config`.
 */
function typesCheck(name: string): string {
  return [
    `import type { SluiceProps } from '${name}';`,
    `import { parseConfig, type SluiceConfig } from '${name}/config';`,
    '',
    '// @ts-expect-error deliveries is a list',
    "export const props: SluiceProps = { deliveries: 'oddy-test' };",
    'export const parse: (input: unknown) => SluiceConfig = parseConfig;',
    '',
  ].join('\n');
}

async function pack(into: string): Promise<Packed> {
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', into], {
    cwd: PROJECT_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as Packed[];
  if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
  return packed;
}

/** Packs the package and installs it into a new app in the system's temp folder. */
export async function consumerApp(): Promise<ConsumerApp> {
  const root = mkdtempSync(join(tmpdir(), 'sluice-consumer-'));
  const dir = join(root, 'app');
  try {
    const packed = await pack(root);
    mkdirSync(join(dir, 'bin'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }, null, 2));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    const example = readmeExample();
    writeFileSync(join(dir, 'bin', 'app.ts'), example);
    writeFileSync(join(dir, 'app.mjs'), example);
    writeFileSync(join(dir, 'types-check.ts'), typesCheck(PACKAGE.name));
    const peers = ['aws-cdk-lib', 'constructs'].map((peer) => `${peer}@${PACKAGE.devDependencies[peer]}`);
    await exec(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(root, packed.filename), ...peers],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    );
    return {
      dir,
      packed,
      installed: join(dir, 'node_modules', PACKAGE.name),
      remove: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
