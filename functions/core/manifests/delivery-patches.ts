import { stringify } from 'yaml';
import { patchProblems } from '../config/patches.ts';
import type { Delivery, DeliveryPatch, ImageOverride, PatchTarget } from '../config/index.ts';
import { SluiceError } from '../errors.ts';
import { inTempDir, runKustomize, writeTree, type KustomizeOptions } from './kustomize.ts';
import { parseManifests, parseOptions } from './load.ts';
import type { Manifest } from './objects.ts';

type KubeObject = Manifest['object'];

const PROBE_KEY = 'sluice.io/delivery-patch-';
const PROBE_ANNOTATION = /^sluice\.io\/delivery-patch-\d+$/;
const ORIGIN_OF_NEW_OBJECTS = 'delivery patches';

/**
 * Flux's `.spec.patches` and `.spec.images`, with real kustomize: the built objects and a
 * generated kustomization holding the delivery's patches and images are built once more, so
 * strategic merge, JSON6902 and image rules are kustomize's own. Stricter than Flux, a patch
 * whose target matches no object is an error (a typo would otherwise change nothing, silently).
 */
export async function applyPatchesAndImages(
  manifests: readonly Manifest[],
  delivery: Pick<Delivery, 'patches' | 'images'>,
  options: KustomizeOptions,
): Promise<Manifest[]> {
  const patches = delivery.patches ?? [];
  const images = delivery.images ?? [];
  if (patches.length === 0 && images.length === 0) return [...manifests];
  checkShapes(patches, images);

  const objects = manifests.map((manifest) => manifest.object);
  const build = (entries: readonly DeliveryPatch[], withImages: boolean) =>
    kustomizeObjects(objects, entries, withImages ? images : [], options);

  let output: KubeObject[];
  try {
    // A probe before each targeted patch marks the objects that patch's target selects.
    output = await build(
      patches.flatMap((patch, index) => (patch.target ? [probe(index, patch.target), patch] : [patch])),
      true,
    );
  } catch (error) {
    throw await whichEntryFailed(error, patches, build);
  }

  const unmatched: string[] = [];
  for (const [index, patch] of patches.entries()) {
    if (!patch.target || output.some((object) => hasProbe(object, index))) continue;
    // A later patch (or this one, deleting its objects) may have removed the mark: ask again
    // with the probe as the last step.
    const again = await build([...patches.slice(0, index), probe(index, patch.target)], false);
    if (!again.some((object) => hasProbe(object, index))) {
      unmatched.push(
        `patches[${index}].target (${describeTarget(patch.target)}) matches no object of the build`,
      );
    }
  }
  if (unmatched.length > 0) throw new SluiceError('BuildFailed', unmatched.join('; '));

  const originById = new Map(manifests.map((manifest) => [idOf(manifest.object), manifest.origin]));
  return output.map((object) => {
    const clean = withoutProbes(object);
    return { object: clean, origin: originById.get(idOf(clean)) ?? ORIGIN_OF_NEW_OBJECTS };
  });
}

/** The same checks as the config schema, for a delivery that was stored without them. */
function checkShapes(patches: readonly DeliveryPatch[], images: readonly ImageOverride[]): void {
  const problems: string[] = [];
  patches.forEach((patch, index) => {
    if (typeof patch.patch !== 'string') problems.push(`patches[${index}].patch: must be a string`);
    else {
      for (const problem of patchProblems(patch.patch, patch.target !== undefined)) {
        problems.push(`patches[${index}].${problem.field}: ${problem.message}`);
      }
    }
  });
  images.forEach((image, index) => {
    if (typeof image.name !== 'string' || image.name === '')
      problems.push(`images[${index}]: name is missing`);
    if (image.newName === undefined && image.newTag === undefined && image.digest === undefined) {
      problems.push(`images[${index}]: set at least one of newName, newTag and digest`);
    }
  });
  if (problems.length > 0) throw new SluiceError('BuildFailed', problems.join('; '));
}

/** Names the patch (or the images) that made kustomize fail, by building ever longer prefixes. */
async function whichEntryFailed(
  error: unknown,
  patches: readonly DeliveryPatch[],
  build: (entries: readonly DeliveryPatch[], withImages: boolean) => Promise<KubeObject[]>,
): Promise<unknown> {
  if (!(error instanceof SluiceError)) return error;
  const failure = async (entries: readonly DeliveryPatch[]) =>
    build(entries, false).then(
      () => undefined,
      (caught: unknown) => (caught instanceof SluiceError ? caught.message : String(caught)),
    );
  const unreadable = await failure([]);
  if (unreadable)
    return new SluiceError('BuildFailed', `kustomize cannot read the built objects: ${unreadable}`);
  for (let index = 0; index < patches.length; index++) {
    const message = await failure(patches.slice(0, index + 1));
    if (message) return new SluiceError('BuildFailed', `patches[${index}]: ${message}`);
  }
  return new SluiceError('BuildFailed', `images: ${error.message}`);
}

async function kustomizeObjects(
  objects: readonly KubeObject[],
  patches: readonly DeliveryPatch[],
  images: readonly ImageOverride[],
  options: KustomizeOptions,
): Promise<KubeObject[]> {
  const kustomization = {
    resources: ['objects.yaml'],
    ...(patches.length > 0 && { patches }),
    ...(images.length > 0 && { images }),
  };
  return inTempDir(async (dir) => {
    // JSON documents: YAML 1.1 readers (kustomize) and 1.2 writers disagree on plain `y`, `on`, `0o1`.
    await writeTree(dir, [
      ['objects.yaml', objects.map((object) => JSON.stringify(object)).join('\n---\n')],
      ['kustomization.yaml', stringify(kustomization)],
    ]);
    const output = await runKustomize(dir, options, { home: dir, hide: dir, as: '' });
    return (await parseManifests(output, ORIGIN_OF_NEW_OBJECTS, parseOptions(options.maxObjects))).map(
      (m) => m.object,
    );
  });
}

function probe(index: number, target: PatchTarget): DeliveryPatch {
  const mark = {
    apiVersion: 'v1',
    kind: 'SluiceProbe',
    metadata: { name: 'probe', annotations: { [`${PROBE_KEY}${index}`]: 'matched' } },
  };
  return { patch: stringify(mark), target };
}

function hasProbe(object: KubeObject, index: number): boolean {
  return object.metadata?.annotations?.[`${PROBE_KEY}${index}`] !== undefined;
}

function withoutProbes(object: KubeObject): KubeObject {
  const annotations = object.metadata?.annotations;
  if (!annotations || !Object.keys(annotations).some((key) => PROBE_ANNOTATION.test(key))) return object;
  const kept = Object.fromEntries(Object.entries(annotations).filter(([key]) => !PROBE_ANNOTATION.test(key)));
  const { annotations: _all, ...metadata } = object.metadata!;
  return { ...object, metadata: { ...metadata, ...(Object.keys(kept).length > 0 && { annotations: kept }) } };
}

function idOf(object: KubeObject): string {
  return [object.apiVersion, object.kind, object.metadata?.namespace ?? '', object.metadata?.name].join('/');
}

const TARGET_FIELDS = [
  'group',
  'version',
  'kind',
  'name',
  'namespace',
  'labelSelector',
  'annotationSelector',
] as const;

/** `kind: Deployment, name: web`, in a fixed order (a stored spec may not keep the key order). */
function describeTarget(target: PatchTarget): string {
  return TARGET_FIELDS.filter((field) => target[field] !== undefined)
    .map((field) => `${field}: ${target[field]}`)
    .join(', ');
}
