// docs/api, the API reference, is what typedoc generates from the public API's TSDoc now
// (typedoc.json): a change to the public surface shows in the diff of the change that makes it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundle-options.ts';

const CHECKED_IN = join(PROJECT_ROOT, 'docs', 'api');

/** Every file under `dir` by its relative path, with its text. */
function tree(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        return [path.slice(dir.length + 1), readFileSync(path, 'utf8')];
      }),
  );
}

describe('the API reference', () => {
  it('docs/api is what typedoc generates from the sources', { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'sluice-api-'));
    try {
      await promisify(execFile)(join(PROJECT_ROOT, 'node_modules', '.bin', 'typedoc'), ['--out', out], {
        cwd: PROJECT_ROOT,
      });
      expect(tree(CHECKED_IN), 'docs/api is out of date: run `npm run api` and commit the result').toEqual(
        tree(out),
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
