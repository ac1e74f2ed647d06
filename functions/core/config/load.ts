import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { ConfigError } from './issues.ts';
import { parseConfig } from './parse.ts';
import type { SluiceConfig } from './types.ts';

/** Reads and validates a YAML config file; syntax and schema errors both come as a ConfigError naming the file. */
export function loadConfigFile(path: string): SluiceConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [{ path: '', message: `cannot read the file: ${(error as Error).message}` }]);
  }
  return parseConfig(parseYaml(text, path), path);
}

/** Parses YAML text; an empty document is an empty config. */
export function parseYaml(text: string, origin: string): unknown {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      origin,
      document.errors.map((error) => {
        const at = error.linePos?.[0];
        const where = at ? `line ${at.line}, column ${at.col}: ` : '';
        const problem = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
        return { path: '', message: `${where}YAML syntax error: ${problem}` };
      }),
    );
  }
  return document.toJS() ?? {};
}
