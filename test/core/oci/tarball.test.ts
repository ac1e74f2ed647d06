import { mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SluiceError } from '../../../functions/core/errors.ts';
import {
  DEFAULT_UNPACK_LIMITS,
  packDirectory,
  unpackArtifact,
  type UnpackLimits,
} from '../../../functions/core/oci/index.ts';
import { tarOf, tgzOf, zeroFilesBomb, zerosBomb } from './tar-fixtures.ts';

const MiB = 1024 * 1024;

/**
 * The bomb without its last bytes: inflating it to the end would fail with a gzip error, so a
 * refusal for any other reason proves that reading stopped early.
 */
const truncated = (gz: Buffer) => gz.subarray(0, gz.length - 64);

async function refusal(gz: Buffer, limits: UnpackLimits = DEFAULT_UNPACK_LIMITS): Promise<SluiceError> {
  const error = await unpackArtifact(gz, limits, 'test-artifact').then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SluiceError);
  expect((error as SluiceError).reason).toBe('ArtifactFailed');
  expect((error as SluiceError).message).toContain('test-artifact');
  return error as SluiceError;
}

function directory(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

describe('packDirectory', () => {
  const longPath = `${'deep/'.repeat(30)}file.yaml`;
  const files = {
    'kustomization.yaml': 'resources: [app.yaml]\n',
    'app.yaml': 'kind: ConfigMap\n',
    'base/nested/deploy.yml': 'kind: Deployment\n',
    [longPath]: 'kind: Secret\n',
  };

  it('round-trips files, including paths longer than 100 characters', async () => {
    const unpacked = await unpackArtifact(await packDirectory(directory(files)));
    expect(Object.fromEntries([...unpacked].map(([path, body]) => [path, body.toString()]))).toEqual(files);
  });

  it('is deterministic: same bytes for the same content, wherever and whenever it is packed', async () => {
    const a = await packDirectory(directory(files));
    const other = directory(files);
    for (const path of Object.keys(files)) utimesSync(join(other, path), 1e9, 1e9);
    const b = await packDirectory(other);
    expect(b.equals(a)).toBe(true);
  });

  it('writes sorted relative entries with mtime 0, uid/gid 0, and skips symlinks', async () => {
    const dir = directory({ 'b.yaml': 'b', 'a/z.yaml': 'z', 'a.yaml': 'a' });
    symlinkSync('/etc/passwd', join(dir, 'passwd.yaml'));
    const tar = gunzipSync(await packDirectory(dir));
    const headers: { path: string; mtime: number; uid: number; gid: number; type: string }[] = [];
    for (let offset = 0; offset + 512 <= tar.length;) {
      const block = tar.subarray(offset, offset + 512);
      if (block.every((b) => b === 0)) break;
      const field = (start: number, length: number) =>
        block.toString('latin1', start, start + length).replace(/\0.*$/s, '');
      const size = parseInt(field(124, 12), 8);
      headers.push({
        path: field(0, 100),
        mtime: parseInt(field(136, 12), 8),
        uid: parseInt(field(108, 8), 8),
        gid: parseInt(field(116, 8), 8),
        type: field(156, 1),
      });
      offset += 512 + Math.ceil(size / 512) * 512;
    }
    expect(headers.map((h) => h.path)).toEqual(['a/', 'a/z.yaml', 'a.yaml', 'b.yaml']);
    expect(headers.every((h) => h.mtime === 0 && h.uid === 0 && h.gid === 0)).toBe(true);
    expect(headers.map((h) => h.type)).toEqual(['5', '0', '0', '0']);
  });
});

describe('unpackArtifact', () => {
  it('normalises paths: no leading ./, no empty or . components; directories are implied', async () => {
    const files = await unpackArtifact(
      tgzOf([
        { path: './', type: 'Directory' },
        { path: './a/', type: 'Directory' },
        { path: './a/x.yaml', body: 'x' },
        { path: 'b//./y.yaml', body: 'y' },
      ]),
    );
    expect([...files.keys()]).toEqual(['a/x.yaml', 'b/y.yaml']);
    expect(files.get('b/y.yaml')?.toString()).toBe('y');
  });

  it.each([
    ['a ".." component', '../escape.yaml', 'File', undefined, '".." path component'],
    ['a ".." component inside', 'a/../../escape.yaml', 'File', undefined, '".." path component'],
    ['an absolute path', '/etc/cron.d/evil', 'File', undefined, 'absolute path'],
    ['a symlink', 'link.yaml', 'SymbolicLink', '/etc/passwd', 'symbolic link'],
    ['a hard link', 'hard.yaml', 'Link', 'app.yaml', 'hard link'],
    ['a character device', 'tty', 'CharacterDevice', undefined, 'CharacterDevice'],
    ['a block device', 'sda', 'BlockDevice', undefined, 'BlockDevice'],
    ['a FIFO', 'pipe', 'FIFO', undefined, 'FIFO'],
  ] as const)('refuses %s', async (_what, path, type, linkpath, problem) => {
    const gz = tgzOf([
      { path: 'app.yaml', body: 'kind: ConfigMap' },
      { path, type, ...(linkpath ? { linkpath } : {}) },
    ]);
    const error = await refusal(gz);
    expect(error.message).toContain(`"${path}"`);
    expect(error.message).toContain(problem);
  });

  it('refuses entry types it does not know', async () => {
    const tar = tarOf([{ path: 'weird.yaml', body: 'x' }]);
    tar[156] = 'Z'.charCodeAt(0);
    // fix the checksum after changing the type flag
    tar.fill(0x20, 148, 156);
    const sum = tar.subarray(0, 512).reduce((a, b) => a + b, 0);
    tar.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    expect((await refusal(gzipSync(tar))).message).toContain('"weird.yaml"');
  });

  it('refuses more files than maxFiles, naming the entry and the limit', async () => {
    const entries = ['a', 'b', 'c', 'd'].map((name) => ({ path: `${name}.yaml`, body: name }));
    const error = await refusal(tgzOf(entries), { ...DEFAULT_UNPACK_LIMITS, maxFiles: 3 });
    expect(error.message).toContain('"d.yaml"');
    expect(error.message).toContain('maxFiles (3');
  });

  it('refuses a file bigger than maxFileBytes from its header', async () => {
    const error = await refusal(tgzOf([{ path: 'big.yaml', body: 'x'.repeat(11) }]), {
      ...DEFAULT_UNPACK_LIMITS,
      maxFileBytes: 10,
    });
    expect(error.message).toContain('"big.yaml"');
    expect(error.message).toContain('maxFileBytes (10 bytes)');
  });

  it('refuses files that add up to more than maxTotalBytes', async () => {
    const entries = [1, 2].map((i) => ({ path: `f${i}.yaml`, body: 'x'.repeat(600) }));
    const error = await refusal(tgzOf(entries), { ...DEFAULT_UNPACK_LIMITS, maxTotalBytes: 1000 });
    expect(error.message).toContain('"f2.yaml"');
    expect(error.message).toContain('maxTotalBytes');
  });

  it('refuses a layer bigger than maxCompressedBytes before inflating it', async () => {
    const gz = tgzOf([{ path: 'a.yaml', body: 'a' }]);
    const error = await refusal(gz, { ...DEFAULT_UNPACK_LIMITS, maxCompressedBytes: gz.length - 1 });
    expect(error.message).toContain('maxCompressedBytes');
  });

  it('refuses what is not gzip, not tar, or gzip inside gzip', async () => {
    const whole = tgzOf([{ path: 'a.yaml', body: 'a' }]);
    expect((await refusal(truncated(whole))).message).toContain('not valid gzip');
    expect((await refusal(Buffer.from('hello, not gzip'))).message).toContain('not valid gzip');
    expect((await refusal(gzipSync(Buffer.from('x'.repeat(2000))))).message).toContain('not a valid tar');
    expect((await refusal(gzipSync(tgzOf([{ path: 'a.yaml', body: 'a' }])))).message).toContain(
      'compressed stream inside gzip',
    );
  });

  it('refuses a file declaring 300 MiB from its header, without inflating the body', async () => {
    const gz = await zeroFilesBomb(1, 300, () => 'bomb.yaml');
    const error = await refusal(truncated(gz));
    expect(error.message).toContain('"bomb.yaml"');
    expect(error.message).toContain('maxFileBytes (10 MiB)');
  });

  it('stops a gzip bomb of 300 MiB (60 files of 5 MiB zeros) at maxTotalBytes', async () => {
    const gz = await zeroFilesBomb(60, 5, (i) => `bomb-${String(i).padStart(2, '0')}.yaml`);
    expect(gz.length).toBeLessThan(2 * MiB);
    const error = await refusal(truncated(gz));
    // The files that fit fill maxTotalBytes; the next is refused from its header: the rest is never inflated.
    const fit = Math.floor(DEFAULT_UNPACK_LIMITS.maxTotalBytes / (5 * MiB));
    expect(fit).toBeLessThan(60);
    expect(error.message).toContain(`"bomb-${String(fit).padStart(2, '0')}.yaml"`);
    expect(error.message).toContain(`maxTotalBytes (${DEFAULT_UNPACK_LIMITS.maxTotalBytes / MiB} MiB`);
  });

  it('stops inflating at maxTotalBytes even when the files themselves stay small (repeated paths)', async () => {
    const gz = await zeroFilesBomb(60, 5, () => 'same.yaml');
    const error = await refusal(truncated(gz));
    const stopped = /stopped after inflating ([\d.]+) MiB/.exec(error.message);
    expect(stopped, error.message).not.toBeNull();
    // maxTotalBytes of content plus room for 10001 tar headers, then it stops: not the 300 MiB.
    const max = DEFAULT_UNPACK_LIMITS.maxTotalBytes / MiB;
    expect(Number(stopped![1])).toBeGreaterThanOrEqual(max);
    expect(Number(stopped![1])).toBeLessThan(max + 25);
  });

  it('stops at the end-of-archive marker: 300 MiB of zeros is an empty archive, refused', async () => {
    const gz = await zerosBomb(300);
    const error = await refusal(truncated(gz));
    expect(error.message).toContain('not a valid tar archive');
  });
});
