import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot, MissingComponentError } from '../../dev/provision.ts';

/**
 * Flux's source-controller and kustomize-controller, pinned. v1.9.0 (Flux v2.9.0) is the newest
 * release these machines can build: v1.9.2 to v1.9.6 need module versions the Go module proxy no
 * longer serves (github.com/fluxcd/pkg/artifact v0.18.2 and v0.18.3 answer 403), and v1.10.x needs
 * Go 1.27.
 */
export const FLUX_CONTROLLERS_VERSION = 'v1.9.0';
/** The Flux release that ships these controllers. */
export const FLUX_RELEASE = 'v2.9.0';

export interface FluxBinaries {
  readonly sourceController: string;
  readonly kustomizeController: string;
  /** The CRDs from the modules' own config/crd/bases. */
  readonly crdDir: string;
}

const here = dirname(fileURLToPath(import.meta.url));

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The controllers built once from Go modules into the cache (about 6 minutes on 2 cores), then reused. */
export function fluxBinaries(say: (line: string) => void): FluxBinaries {
  const dir = join(cacheRoot(), `flux-${FLUX_CONTROLLERS_VERSION}`);
  const binaries = {
    sourceController: join(dir, 'source-controller'),
    kustomizeController: join(dir, 'kustomize-controller'),
    crdDir: join(dir, 'crds'),
  };
  if (executable(binaries.sourceController) && executable(binaries.kustomizeController)) return binaries;
  say(
    `building Flux's source-controller and kustomize-controller ${FLUX_CONTROLLERS_VERSION} from Go modules into ${dir} (first run only; several minutes)`,
  );
  const build = spawnSync('bash', [join(here, 'build-flux.sh'), dir, FLUX_CONTROLLERS_VERSION], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (build.status !== 0)
    throw new MissingComponentError(
      `Flux's controllers ${FLUX_CONTROLLERS_VERSION} could not be built (Go and the Go module proxy are needed): ${build.stderr.trim().split('\n').slice(-4).join(' ')}`,
    );
  return binaries;
}
