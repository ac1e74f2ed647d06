import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../../functions/core/config/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfigFile', () => {
  it('reads YAML and validates it', () => {
    const path = file(
      'ok.yaml',
      ['gates:', '  - name: sre-approval', '    default: closed', '    window: 1h', ''].join('\n'),
    );
    expect(loadConfigFile(path)).toEqual({
      gates: [
        {
          name: 'sre-approval',
          default: 'closed',
          windowMs: 3_600_000,
          schedules: [],
          approval: 'any',
          approvers: 1,
        },
      ],
      deliveries: [],
      rollouts: [],
    });
  });

  it('treats an empty file as an empty config', () => {
    expect(loadConfigFile(file('empty.yaml', '# nothing yet\n'))).toEqual({
      gates: [],
      deliveries: [],
      rollouts: [],
    });
  });

  it('names the file, line and column of a YAML syntax error', () => {
    const path = file(
      'syntax.yaml',
      ['gates:', '  - name: a', '    default: open', '   window: 1h', ''].join('\n'),
    );
    const error = errorOf(() => loadConfigFile(path));
    expect(error.message).toMatch(new RegExp(`^${path}: line 4, column \\d+: YAML syntax error: `));
    expect(error.message.split('\n')).toHaveLength(error.issues.length);
  });

  it('reports duplicate keys as YAML errors', () => {
    const path = file('dup.yaml', ['gates: []', 'gates: []', ''].join('\n'));
    expect(() => loadConfigFile(path)).toThrow(
      `${path}: line 2, column 1: YAML syntax error: Map keys must be unique`,
    );
  });

  it('names the file in schema errors', () => {
    const path = file('bad.yaml', ['gates:', '  - name: sre-approval', '    default: shut', ''].join('\n'));
    expect(() => loadConfigFile(path)).toThrow(
      `${path}: gates[sre-approval].default: must be one of open, closed, not "shut"`,
    );
  });

  it('names a file it cannot read', () => {
    const path = join(dir, 'missing.yaml');
    expect(() => loadConfigFile(path)).toThrow(`${path}: cannot read the file: ENOENT`);
  });
});
