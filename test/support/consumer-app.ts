// A user's CDK app, outside the repository: the package as `npm pack` makes it (its prepack script
// builds dist/), installed from the tarball next to aws-cdk-lib and constructs from the registry,
// with the README's example as its app. Shaped like `cdk init app --language typescript`: a
// CommonJS package, TypeScript with module NodeNext (and a node16 variant), tested by Jest with
// ts-jest as `cdk init` set it up.
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
  exclude: ['node_modules', 'cdk.out', 'build', 'build16', 'test'],
};

/** The same app compiled with TypeScript's `module: node16` (CommonJS, no `require` of ES modules). */
const TSCONFIG_NODE16 = {
  extends: './tsconfig.json',
  compilerOptions: { module: 'Node16', moduleResolution: 'Node16', outDir: 'build16' },
};

/** Jest and ts-jest as `cdk init app --language typescript` set them up (before it moved to swc). */
export const JEST_VERSIONS = { jest: '29.7.0', 'ts-jest': '29.4.15', '@types/jest': '29.5.14' } as const;

const JEST_CONFIG = `module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  setupFilesAfterEnv: ['aws-cdk-lib/testhelpers/jest-autoclean'],
};
`;

/** `cdk init`'s tsconfig.json of the ts-jest days, for the tests. */
const TSCONFIG_JEST = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['es2022'],
    declaration: true,
    strict: true,
    noImplicitReturns: true,
    inlineSourceMap: true,
    inlineSources: true,
    experimentalDecorators: true,
    strictPropertyInitialization: false,
    skipLibCheck: true,
    typeRoots: ['./node_modules/@types'],
    types: ['jest', 'node'],
  },
  exclude: ['node_modules', 'cdk.out'],
};

/** A user's first CDK unit test of a stack with sluice in it: `Template.fromStack` assertions. */
function jestTest(name: string): string {
  return `import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { HANDLER_NAMES, Sluice } from '${name}';
import { parseConfig } from '${name}/config';

const delivery = {
  name: 'oddy-test',
  source: { url: 'oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com/oddy-test' },
  cluster: { eks: { name: 'prod', region: 'eu-west-1' } },
};

test('a stack with sluice has its functions, its table and the delivery', () => {
  const app = new App();
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  new Sluice(stack, 'Sluice', { deliveries: [delivery] });
  const template = Template.fromStack(stack);
  template.resourcePropertiesCountIs('AWS::Lambda::Function', { Handler: 'index.handler' }, HANDLER_NAMES.length);
  template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
  expect(JSON.stringify(template.toJSON())).toContain('oddy-test');
  template.hasResourceProperties('AWS::Lambda::Function', { Runtime: Match.stringLikeRegexp('^nodejs') });
});

test('sluice/config parses a config file', () => {
  expect(parseConfig({ deliveries: [{ ...delivery, cluster: { kubeconfig: '/k' } }] }).deliveries[0]?.name).toBe('oddy-test');
});
`;
}

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
    writeFileSync(join(dir, 'tsconfig.node16.json'), JSON.stringify(TSCONFIG_NODE16, null, 2));
    writeFileSync(join(dir, 'tsconfig.jest.json'), JSON.stringify(TSCONFIG_JEST, null, 2));
    writeFileSync(join(dir, 'jest.config.js'), JEST_CONFIG);
    mkdirSync(join(dir, 'test'));
    writeFileSync(join(dir, 'test', 'sluice.test.ts'), jestTest(PACKAGE.name));
    const example = readmeExample();
    writeFileSync(join(dir, 'bin', 'app.ts'), example);
    writeFileSync(join(dir, 'app.mjs'), example);
    writeFileSync(join(dir, 'types-check.ts'), typesCheck(PACKAGE.name));
    const peers = ['aws-cdk-lib', 'constructs'].map((peer) => `${peer}@${PACKAGE.devDependencies[peer]}`);
    const jest = Object.entries(JEST_VERSIONS).map(([name, version]) => `${name}@${version}`);
    await exec(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(root, packed.filename), ...peers],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    );
    await exec('npm', ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', ...jest], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
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
