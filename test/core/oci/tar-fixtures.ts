// Hand-built tar streams for the unpack tests: hostile ones included.
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createGzip, gzipSync } from 'node:zlib';
import { Header, type HeaderData } from 'tar';

export interface FixtureEntry {
  readonly path: string;
  readonly type?: HeaderData['type'];
  readonly body?: Buffer | string;
  /** Declared size when it differs from the body (bombs declare sizes they then stream). */
  readonly size?: number;
  readonly linkpath?: string;
}

/** One 512-byte header block, exactly as written (no path sanitising). */
export function headerBlock(entry: FixtureEntry): Buffer {
  const body = entry.body === undefined ? Buffer.alloc(0) : Buffer.from(entry.body);
  const block = Buffer.alloc(512);
  new Header({
    path: entry.path,
    type: entry.type ?? 'File',
    size: entry.size ?? body.length,
    mode: entry.type === 'Directory' ? 0o755 : 0o644,
    uid: 0,
    gid: 0,
    mtime: new Date(0),
    ...(entry.linkpath !== undefined ? { linkpath: entry.linkpath } : {}),
  }).encode(block);
  return block;
}

function padding(size: number): Buffer {
  return Buffer.alloc(size % 512 ? 512 - (size % 512) : 0);
}

/** An uncompressed tar of the entries, ended by two zero blocks. */
export function tarOf(entries: readonly FixtureEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const body = entry.body === undefined ? Buffer.alloc(0) : Buffer.from(entry.body);
    parts.push(headerBlock(entry), body, padding(body.length));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function tgzOf(entries: readonly FixtureEntry[]): Buffer {
  return gzipSync(tarOf(entries));
}

/** gzip of a stream of parts, without holding the uncompressed whole in memory. */
export async function gzipParts(parts: Iterable<Buffer>): Promise<Buffer> {
  return buffer(Readable.from(parts).pipe(createGzip({ level: 1 })));
}

const MiB = 1024 * 1024;

/**
 * `count` files of `fileMiB` MiB of zeros each, named by `name(i)` (compresses ~1000:1). Each
 * file's zeros are written chunk by chunk, never all at once.
 */
export async function zeroFilesBomb(
  count: number,
  fileMiB: number,
  name: (i: number) => string,
): Promise<Buffer> {
  const zeros = Buffer.alloc(MiB);
  function* parts() {
    for (let i = 0; i < count; i++) {
      yield headerBlock({ path: name(i), size: fileMiB * MiB });
      for (let j = 0; j < fileMiB; j++) yield zeros;
    }
    yield Buffer.alloc(1024);
  }
  return gzipParts(parts());
}

/** `mib` MiB of zeros, gzipped: no tar structure at all. */
export async function zerosBomb(mib: number): Promise<Buffer> {
  const zeros = Buffer.alloc(MiB);
  function* parts() {
    for (let j = 0; j < mib; j++) yield zeros;
  }
  return gzipParts(parts());
}
