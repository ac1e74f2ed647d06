import { Composer, Parser } from 'yaml';
import { SluiceError } from '../errors.ts';
import type { BuildLimits } from '../limits.ts';
import { formatBytes } from '../limits.ts';
import { pacer } from '../pacer.ts';
import { largestParts } from './count.ts';

const YAML_FILE = /(\.(ya?ml|json)|\/Kustomization)$/i;
/** The same alias bound as sluice's own parser (load.ts). */
const MAX_ALIASES = 100;

/**
 * Holds every file kustomize could read (all files under the directories the build reaches) to
 * sluice's own limits before kustomize starts: their bytes together, and for each YAML/JSON file
 * its syntax, its aliases (a "billion laughs" file is refused here, naming it) and its documents.
 * Parsed as `parseAllDocuments` parses, one document at a time, letting the event loop turn
 * between them (30 MiB of inputs take about half a second).
 */
export async function checkKustomizeInputs(
  files: ReadonlyMap<string, Buffer>,
  dirs: readonly string[],
  limits: BuildLimits,
): Promise<void> {
  const inputs = [...files.keys()]
    .filter((file) => dirs.some((dir) => dir === '' || file.startsWith(`${dir}/`)))
    .sort();
  const sizes = inputs.map((file) => [file, files.get(file)!.length] as const);
  const bytes = sizes.reduce((sum, [, size]) => sum + size, 0);
  if (bytes > limits.maxManifestBytes) {
    throw new SluiceError(
      'BuildFailed',
      `the files kustomize would read hold ${formatBytes(bytes)} (${largestParts(sizes, formatBytes)}), more than the limit maxManifestBytes (${formatBytes(limits.maxManifestBytes)}); kustomize was not run`,
    );
  }
  let documents = 0;
  const pace = pacer();
  for (const file of inputs.filter((name) => YAML_FILE.test(`/${name}`))) {
    const text = files.get(file)!.toString('utf8');
    for (const doc of new Composer().compose(new Parser().parse(text))) {
      await pace.pause();
      documents += 1;
      if (doc.errors.length > 0) continue; // kustomize reports its own syntax errors, naming the file
      try {
        doc.toJS({ maxAliasCount: MAX_ALIASES });
      } catch (error) {
        throw new SluiceError(
          'BuildFailed',
          `${file}: invalid YAML: ${(error as Error).message}; kustomize was not run`,
        );
      }
    }
    if (documents > limits.maxObjects) {
      throw new SluiceError(
        'BuildFailed',
        `the files kustomize would read hold more than ${limits.maxObjects} YAML documents (maxObjects), ${file} among them; kustomize was not run`,
      );
    }
  }
}
