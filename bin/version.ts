import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The package's version from its package.json: `../package.json` from bin/sluice.ts in a clone,
 * `../../package.json` from dist/bin/sluice.js in an installed package.
 */
export function packageVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (!existsSync(path)) continue;
    const { name, version } = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; version?: string };
    if (name === 'sluice' && version) return version;
  }
  throw new Error(`sluice: no package.json of sluice found above ${fileURLToPath(import.meta.url)}`);
}
