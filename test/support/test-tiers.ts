// Which test files need the local components: those whose imports (followed through test/ and
// dev/) reach a module that calls vitest's `inject(` (the components the global setup provides)
// or says `@local-components` (it starts or provisions them itself: the demo, `sluice dev up`,
// cfn-lint's virtualenv). The others form the unit tier (`npm run test:unit`), which starts nothing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const IMPORT =
  /(?:^|\s)(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]|import\s*\(\s*['"](\.[^'"]+)['"]\s*\)|^import\s+['"](\.[^'"]+)['"]/gm;
const FOLLOWED = ['test', 'dev'];

/** Every `*.test.ts` under `root/test`, relative to `root`, sorted. */
export function testFiles(root: string): string[] {
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join('test', file))
    .sort();
}

/** Splits the test files into those that need the components and those that do not. */
export function testTiers(root: string): { readonly unit: string[]; readonly integration: string[] } {
  const needs = new Map<string, boolean>();
  const needsComponents = (file: string, visiting: Set<string>): boolean => {
    const known = needs.get(file);
    if (known !== undefined) return known;
    if (visiting.has(file)) return false; // a cycle: decided by its other imports
    visiting.add(file);
    const source = readFileSync(file, 'utf8');
    let result = /\binject\(|@local-components/.test(source);
    for (const match of source.matchAll(IMPORT)) {
      if (result) break;
      const target = resolve(dirname(file), (match[1] ?? match[2] ?? match[3])!);
      const top = relative(root, target).split('/')[0]!;
      if (FOLLOWED.includes(top) && existsSync(target)) result = needsComponents(target, visiting);
    }
    visiting.delete(file);
    needs.set(file, result);
    return result;
  };
  const unit: string[] = [];
  const integration: string[] = [];
  for (const file of testFiles(root))
    (needsComponents(join(root, file), new Set()) ? integration : unit).push(file);
  return { unit, integration };
}
