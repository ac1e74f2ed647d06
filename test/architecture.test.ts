import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const core = join(root, 'functions', 'core');

/** Every relative import of each .ts file under `folders`, static or dynamic, as absolute paths. */
function importGraph(folders: readonly string[] = ['functions']): Map<string, string[]> {
  const files = folders.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(root, folder, file)),
  );
  const imports = /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)'(\.{1,2}\/[^']+\.ts)'/gm;
  return new Map(
    files.map((file) => [
      file,
      [...readFileSync(file, 'utf8').matchAll(imports)].map((m) => normalize(join(dirname(file), m[1]!))),
    ]),
  );
}

/** ARCHITECTURE.md's layer table: per topic of functions/core (a folder or a file), its layer. */
function layersFromArchitecture(): Map<string, number> {
  const text = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');
  const layers = new Map<string, number>();
  for (const row of text.matchAll(/^\|\s*(\d+)\s*\|([^|]+)\|/gm)) {
    for (const name of row[2]!.matchAll(/`([^`]+)`/g))
      layers.set(name[1]!.replace(/\/$/, ''), Number(row[1]));
  }
  return layers;
}

/** `functions/core/<topic>/…` → topic; a handler folder → `handler:<name>`. */
function unitOf(file: string): string {
  const path = relative(join(root, 'functions'), file).split('/');
  return path[0] === 'core' ? path[1]! : `handler:${path[0]}`;
}

/** Files that import each other, directly or round about (Tarjan's strongly connected components). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      for (let top = stack.pop()!; ; top = stack.pop()!) {
        component.push(relative(root, top));
        if (top === file) break;
      }
      if (component.length > 1) found.push(component);
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the layout in ARCHITECTURE.md', () => {
  const graph = importGraph();
  const layers = layersFromArchitecture();

  it('places every topic of functions/core in a layer', () => {
    const topics = readdirSync(core).map((name) => name);
    expect(topics.filter((topic) => !layers.has(topic))).toEqual([]);
  });

  it('has each topic import only from lower layers, and no handler import another', () => {
    const wrong: string[] = [];
    for (const [file, imports] of graph) {
      const from = unitOf(file);
      for (const target of imports) {
        const to = unitOf(target);
        if (from === to) continue;
        const allowed = from.startsWith('handler:')
          ? !to.startsWith('handler:')
          : layers.get(to)! < layers.get(from)!;
        if (!allowed) wrong.push(`${relative(root, file)} imports ${relative(root, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('has no files that import each other, directly or round about, in the functions, the construct, the CLI or the dev components', () => {
    const everything = importGraph(['functions', 'lib', 'bin', 'dev']);
    expect(everything.get(join(root, 'lib', 'bundling.ts'))).toContain(
      join(root, 'lib', 'bundle-options.ts'),
    );
    expect(cycles(everything)).toEqual([]);
  });

  it('reads the environment only in the composition root (environment.ts) and the handlers', () => {
    const readers = [...graph.keys()]
      .filter((file) => file.startsWith(core) && file !== join(core, 'environment.ts'))
      .filter((file) => /\bprocess\.env\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(readers).toEqual([]);
  });

  it('finds the imports it checks (the check is not vacuous)', () => {
    const reconcile = join(core, 'reconcile', 'reconcile.ts');
    expect(graph.get(reconcile)).toContain(join(core, 'store', 'lease.ts'));
    expect(layers.get('environment.ts')).toBeGreaterThan(layers.get('reconcile')!);
  });
});
