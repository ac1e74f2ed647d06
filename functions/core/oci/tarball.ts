import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGunzip, gzipSync } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';
import type { SluiceError } from '../errors.ts';
import { DEFAULT_UNPACK_LIMITS, type UnpackLimits } from '../limits.ts';
import { formatBytes } from '../limits.ts';
import { artifactError } from './errors.ts';

export { DEFAULT_UNPACK_LIMITS, type UnpackLimits } from '../limits.ts';

const EPOCH = new Date(0);

/**
 * A tar+gzip of a directory as `flux push artifact` writes it: paths relative to `dir`, regular
 * files and directories only (symlinks and the like are skipped), entries sorted, mtime 0,
 * uid/gid 0, no user names, mode 0644/0755.
 */
export async function packDirectory(dir: string): Promise<Buffer> {
  const blocks: Buffer[] = [];
  const add = (header: Header, body?: Buffer) => {
    const block = Buffer.alloc(512);
    if (header.encode(block)) blocks.push(new Pax({ path: header.path }).encode());
    blocks.push(block);
    if (body && body.length > 0) {
      blocks.push(body);
      if (body.length % 512) blocks.push(Buffer.alloc(512 - (body.length % 512)));
    }
  };
  const walk = async (relative: string) => {
    const names = (await readdir(join(dir, relative))).sort();
    for (const name of names) {
      const path = relative ? `${relative}/${name}` : name;
      const stat = await lstat(join(dir, path));
      const base = { uid: 0, gid: 0, uname: '', gname: '', mtime: EPOCH };
      if (stat.isDirectory()) {
        add(new Header({ ...base, path: `${path}/`, mode: 0o755, size: 0, type: 'Directory' }));
        await walk(path);
      } else if (stat.isFile()) {
        const body = await readFile(join(dir, path));
        const mode = stat.mode & 0o111 ? 0o755 : 0o644;
        add(new Header({ ...base, path, mode, size: body.length, type: 'File' }), body);
      }
    }
  };
  try {
    await walk('');
  } catch (error) {
    throw artifactError(`cannot pack directory ${dir}: ${(error as Error).message}`, error);
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** A header block, a PAX record block and the body's padding. */
const TAR_OVERHEAD_PER_ENTRY = 2048;

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** The entry's path as a normalised relative POSIX path, or why it is refused. */
function entryKey(path: string): { key: string } | { problem: string } {
  if (path.includes('\0') || path.includes('\\')) return { problem: 'has a NUL or backslash in its path' };
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return { problem: 'has an absolute path' };
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) return { problem: 'has a ".." path component' };
  return { key: parts.join('/') };
}

/**
 * Unpacks a tar+gzip artifact in memory: keys are normalised relative POSIX paths, directories are
 * implied. Refuses `..`, absolute paths, links, devices, FIFOs and anything unknown, and stops
 * inflating as soon as a limit is passed. `label` names the artifact in errors.
 */
export async function unpackArtifact(
  gz: Buffer,
  limits: UnpackLimits = DEFAULT_UNPACK_LIMITS,
  label = 'artifact',
): Promise<Map<string, Buffer>> {
  if (gz.length > limits.maxCompressedBytes) {
    throw artifactError(
      `${label}: the compressed layer is ${formatBytes(gz.length)}, more than the limit maxCompressedBytes ` +
        `(${formatBytes(limits.maxCompressedBytes)})`,
    );
  }
  return new Promise((resolve, reject) => {
    const files = new Map<string, Buffer>();
    const sizes = new Map<string, number>();
    let settled = false;
    let inflated = 0;
    let declared = 0;
    let entries = 0;
    let endOfArchive = false;
    // File contents are checked against maxTotalBytes from their headers; the stream itself may
    // add headers, padding and PAX records, bounded here so that no input inflates without end.
    const maxStreamBytes =
      limits.maxTotalBytes + TAR_OVERHEAD_PER_ENTRY * (limits.maxFiles + 1) + 1024 * 1024;
    const gunzip = createGunzip();
    const parser = new Parser({ strict: true });

    const fail = (error: SluiceError) => {
      if (settled) return;
      settled = true;
      gunzip.destroy();
      reject(error);
    };
    const refuse = (entry: ReadEntry, problem: string) => {
      entry.resume();
      fail(artifactError(`${label}: entry "${entry.path}" ${problem}`));
    };

    parser.on('entry', (entry: ReadEntry) => {
      if (settled) return entry.resume();
      const checked = entryKey(entry.path);
      if ('problem' in checked) return refuse(entry, checked.problem);
      if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
        return refuse(
          entry,
          `is a ${entry.type === 'Link' ? 'hard link' : 'symbolic link'}; links are refused`,
        );
      }
      if (entry.type !== 'Directory' && !FILE_TYPES.has(entry.type)) {
        return refuse(entry, `is a ${entry.type} entry; only regular files and directories are allowed`);
      }
      if (++entries > limits.maxFiles) {
        return refuse(
          entry,
          `is one more than the limit maxFiles (${limits.maxFiles} files and directories)`,
        );
      }
      if (entry.type === 'Directory') return entry.resume();
      if (!checked.key) return refuse(entry, 'is a file without a name');
      if (entry.size > limits.maxFileBytes) {
        return refuse(
          entry,
          `is ${formatBytes(entry.size)}, more than the limit maxFileBytes (${formatBytes(limits.maxFileBytes)})`,
        );
      }
      declared += entry.size - (sizes.get(checked.key) ?? 0);
      sizes.set(checked.key, entry.size);
      if (declared > limits.maxTotalBytes) {
        return refuse(
          entry,
          `takes the files past the limit maxTotalBytes (${formatBytes(limits.maxTotalBytes)} uncompressed)`,
        );
      }
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => files.set(checked.key, Buffer.concat(chunks)));
    });
    parser.on('ignoredEntry', (entry: ReadEntry) =>
      refuse(entry, `is a ${entry.type} entry, which is not supported`),
    );
    parser.on('eof', () => {
      endOfArchive = true;
    });
    parser.on('error', (error: Error) =>
      fail(artifactError(`${label}: not a valid tar archive: ${error.message}`, error)),
    );
    parser.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(files);
    });

    gunzip.on('data', (chunk: Buffer) => {
      if (settled || endOfArchive) return;
      if (inflated === 0 && (chunk[0] === 0x1f || chunk[0] === 0x28)) {
        // tar's Parser would decompress a nested gzip or zstd stream: refuse it.
        return fail(
          artifactError(`${label}: the layer holds a compressed stream inside gzip, not a tar archive`),
        );
      }
      inflated += chunk.length;
      if (inflated > maxStreamBytes) {
        return fail(
          artifactError(
            `${label}: the uncompressed archive is more than ${formatBytes(maxStreamBytes)} (the limit ` +
              `maxTotalBytes plus room for tar headers); stopped after inflating ${formatBytes(inflated)}`,
          ),
        );
      }
      parser.write(chunk);
      if (endOfArchive) {
        // Whatever follows the end-of-archive blocks is padding or junk: do not inflate it.
        gunzip.destroy();
        parser.end();
      }
    });
    gunzip.on('end', () => {
      if (!settled && !endOfArchive) parser.end();
    });
    gunzip.on('error', (error: Error) => {
      fail(artifactError(`${label}: the layer is not valid gzip: ${error.message}`, error));
    });
    gunzip.end(gz);
  });
}
