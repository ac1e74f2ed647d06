import { join, posix } from 'node:path';
import { parse, stringify } from 'yaml';
import { SluiceError } from '../errors.ts';
import { isRecord } from '../config/issues.ts';
import { DEFAULT_BUILD_LIMITS } from '../limits.ts';
import { inspectKustomizations, kustomizationIn } from './kustomization.ts';
import { inTempDir, runKustomize, writeTree, type KustomizeOptions } from './kustomize.ts';
import { countDocuments } from './count.ts';
import { checkKustomizeInputs } from './kustomize-inputs.ts';
import { checkDocumentCount, parseManifests, parseOptions } from './load.ts';
import type { Manifest } from './objects.ts';

/** kustomize's annotation naming the file (or generator) an object came from. */
const ORIGIN_ANNOTATION = 'config.kubernetes.io/origin';
const ARTIFACT = 'artifact';
/** Beside `artifact/`, so no artifact path can collide with it. */
const WRAPPER = 'sluice-build';

/**
 * `kubectl kustomize` of the kustomization in `dir`, on a private copy of the artifact, after
 * refusing anything that reaches outside it. A thin wrapper kustomization asks kustomize for
 * origin annotations, so each object is named by the file it came from (`base/pool.yaml`); the
 * annotations are removed again unless the artifact asked for them itself.
 */
export async function buildKustomization(
  files: ReadonlyMap<string, Buffer>,
  dir: string,
  options: KustomizeOptions,
): Promise<Manifest[]> {
  const kustomizationFile = kustomizationIn(files, dir)!;
  const info = inspectKustomizations(files, dir);
  await checkKustomizeInputs(files, info.dirs, {
    maxManifestBytes: options.maxOutputBytes ?? DEFAULT_BUILD_LIMITS.maxManifestBytes,
    maxObjects: options.maxObjects ?? DEFAULT_BUILD_LIMITS.maxObjects,
  });
  return inTempDir(async (tmp) => {
    const artifactRoot = join(tmp, ARTIFACT);
    await writeTree(artifactRoot, files);
    const place = { home: tmp, hide: artifactRoot, as: '', building: kustomizationFile };
    const target = join(artifactRoot, dir);
    let output: string;
    if (info.originAnnotations) {
      output = await runKustomize(target, options, place);
    } else {
      const wrapper = {
        resources: [posix.join('..', ARTIFACT, dir || '.')],
        buildMetadata: ['originAnnotations'],
        ...(info.rootSortOptions !== undefined && { sortOptions: info.rootSortOptions }),
      };
      await writeTree(tmp, [[`${WRAPPER}/kustomization.yaml`, stringify(wrapper)]]);
      try {
        output = await runKustomize(join(tmp, WRAPPER), options, place);
      } catch (error) {
        // The wrapper wraps kustomize's message in its own; the direct build says it plainly.
        await runKustomize(target, options, place);
        throw error;
      }
    }
    const maxObjects = options.maxObjects ?? DEFAULT_BUILD_LIMITS.maxObjects;
    checkDocumentCount(countDocuments(output), maxObjects, 'its output');
    const built = await parseManifests(
      output,
      `kustomize build of ${kustomizationFile}`,
      parseOptions(maxObjects),
    );
    return info.originAnnotations
      ? built
      : built.map((manifest) => withFileOrigin(manifest, kustomizationFile));
  }).catch((error: unknown) => {
    throw error instanceof SluiceError
      ? new SluiceError(error.reason, `kustomize build of ${kustomizationFile}: ${error.message}`, {
          cause: error,
        })
      : error;
  });
}

/** Moves kustomize's origin annotation into `origin` (`base/pool.yaml`, `base/kustomization.yaml (ConfigMapGenerator)`). */
function withFileOrigin(manifest: Manifest, kustomizationFile: string): Manifest {
  const { annotations, ...metadata } = manifest.object.metadata ?? {};
  const text = annotations?.[ORIGIN_ANNOTATION];
  if (text === undefined) return manifest;
  const { [ORIGIN_ANNOTATION]: _origin, ...rest } = annotations!;
  const object = {
    ...manifest.object,
    metadata: { ...metadata, ...(Object.keys(rest).length > 0 && { annotations: rest }) },
  };
  return { object, origin: originOf(text) ?? `${kustomizationFile} (built)` };
}

function originOf(text: string): string | undefined {
  let origin: unknown;
  try {
    origin = parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(origin)) return undefined;
  const fromWrapper = (path: unknown) =>
    typeof path === 'string'
      ? posix.normalize(posix.join(WRAPPER, path)).replace(new RegExp(`^${ARTIFACT}/`), '')
      : undefined;
  const path = fromWrapper(origin.path);
  if (path) return path;
  const configuredIn = fromWrapper(origin.configuredIn);
  const by = isRecord(origin.configuredBy) ? origin.configuredBy.kind : undefined;
  return configuredIn ? `${configuredIn}${typeof by === 'string' ? ` (${by})` : ''}` : undefined;
}
