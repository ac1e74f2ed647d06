// The SOPS decryption code (KMS and Secrets Manager clients, age, the sops decoder) is reached only
// through a dynamic import: bundled with code splitting, none of it is in what the reconcile
// handler loads at start, so deliveries without decryption never pay for it.
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ALIASES, handlerEntry, PROJECT_ROOT } from '../../../lib/bundling.ts';

/** The input files of the output chunks `entry` imports statically, transitively. */
function staticInputs(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const output = pending.pop()!;
    if (seen.has(output)) continue;
    seen.add(output);
    for (const imported of metafile.outputs[output]!.imports)
      if (imported.kind === 'import-statement' && metafile.outputs[imported.path])
        pending.push(imported.path);
  }
  return [...seen].flatMap((output) => Object.keys(metafile.outputs[output]!.inputs));
}

describe('the reconcile bundle', () => {
  it('loads the decryption code only when a delivery with decryption is reconciled', async () => {
    const { metafile } = await build({
      absWorkingDir: PROJECT_ROOT,
      entryPoints: { index: handlerEntry('reconcile') },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      mainFields: ['module', 'main'],
      alias: { ...ALIASES },
      outdir: 'out',
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    const entry = Object.keys(metafile.outputs).find((output) => output.endsWith('index.js'))!;
    const loadedAtStart = staticInputs(metafile, entry);
    const everything = Object.keys(metafile.inputs);
    const decryption = [
      /@aws-sdk\/client-kms\//,
      /@aws-sdk\/client-secrets-manager\//,
      /age-encryption\//,
      /functions\/core\/sops\/(aws|decrypt|data-key|tree|values|metadata)\.ts$/,
    ];
    for (const pattern of decryption) {
      expect(
        everything.some((input) => pattern.test(input)),
        `${pattern} is bundled`,
      ).toBe(true);
      expect(loadedAtStart.filter((input) => pattern.test(input))).toEqual([]);
    }
  });
});
