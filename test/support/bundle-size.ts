import type { Metafile } from 'esbuild';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** `import … from "./x.mjs"` and `import "./x.mjs"`, not `import("./x.mjs")`. */
const STATIC_IMPORT = /\bimport\s*(?:[^"'()]*?\bfrom\s*)?["'](\.{1,2}\/[^"']+\.mjs)["']/g;

/**
 * The bytes Node loads when it imports `file`: the file and every chunk it imports statically,
 * transitively. Chunks reached only by a dynamic import() are loaded later, if ever.
 */
export function coldLoadBytes(file: string): number {
  const seen = new Set<string>();
  const pending = [file];
  let bytes = 0;
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    bytes += statSync(next).size;
    for (const match of readFileSync(next, 'utf8').matchAll(STATIC_IMPORT))
      pending.push(join(dirname(next), match[1]!));
  }
  return bytes;
}

/**
 * The outputs (by esbuild's metafile) that importing the bundle's index.mjs loads: it and the
 * chunks it imports statically, transitively; the others are loaded by a dynamic import(), if ever.
 */
export function outputsLoadedAtImport(metafile: Metafile): Set<string> {
  const outputs = metafile.outputs;
  const loaded = new Set<string>();
  const pending = Object.keys(outputs).filter((path) => path.endsWith('/index.mjs'));
  while (pending.length > 0) {
    const path = pending.pop()!;
    if (loaded.has(path)) continue;
    loaded.add(path);
    for (const i of outputs[path]!.imports)
      if (i.kind === 'import-statement' && outputs[i.path]) pending.push(i.path);
  }
  return loaded;
}
