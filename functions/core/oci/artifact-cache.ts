import { mkdirSync, mkdtempSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Digest } from './digest.ts';

/** What a warm container keeps of the artifacts it pulled. @default 256 MiB of layers */
export const ARTIFACT_CACHE_BYTES = 256 * 2 ** 20;
const MAX_MANIFESTS = 512;

/** A manifest as the registry served it. */
export interface CachedManifest {
  readonly body: Buffer;
  readonly digest: string;
  readonly mediaType: string;
}

/**
 * Manifests (in memory) and layers (files under `dir`, a warm Lambda container's /tmp) kept by
 * digest, so that a run of a revision the container has pulled before asks the registry only
 * what the tag points at. Content is addressed by its sha256 and checked again on every read: a
 * file that does not hash to its name is dropped and fetched anew. The oldest layers go first
 * past `maxBytes`. It also remembers which registries take Basic auth, so a run's first request
 * carries the credentials.
 */
export class ArtifactCache {
  /** Registries known to take Basic auth (RegistryClientOptions.basicAuthHosts). */
  readonly basicAuthHosts = new Set<string>();
  private readonly dir: string;
  private readonly manifests = new Map<string, CachedManifest>();
  /** Layer digest → size, oldest first. */
  private readonly layers = new Map<string, number>();
  private bytes = 0;

  constructor(
    root: string,
    private readonly maxBytes = ARTIFACT_CACHE_BYTES,
  ) {
    mkdirSync(root, { recursive: true });
    this.dir = mkdtempSync(join(root, 'artifacts-'));
  }

  manifest(digest: string): CachedManifest | undefined {
    const found = this.manifests.get(digest);
    return found && sha256Digest(found.body) === digest ? found : undefined;
  }

  rememberManifest(manifest: CachedManifest): void {
    this.manifests.delete(manifest.digest);
    this.manifests.set(manifest.digest, manifest);
    if (this.manifests.size > MAX_MANIFESTS) this.manifests.delete(this.manifests.keys().next().value!);
  }

  async layer(digest: string): Promise<Buffer | undefined> {
    if (!this.layers.has(digest)) return undefined;
    const data = await readFile(this.fileOf(digest)).catch(() => undefined);
    if (data && sha256Digest(data) === digest) return data;
    await this.forget(digest);
    return undefined;
  }

  async rememberLayer(digest: string, data: Buffer): Promise<void> {
    if (data.length > this.maxBytes || this.layers.has(digest)) return;
    while (this.bytes + data.length > this.maxBytes) await this.forget(this.layers.keys().next().value!);
    const file = this.fileOf(digest);
    await writeFile(`${file}.partial`, data);
    await rename(`${file}.partial`, file);
    this.layers.set(digest, data.length);
    this.bytes += data.length;
  }

  private async forget(digest: string): Promise<void> {
    this.bytes -= this.layers.get(digest) ?? 0;
    this.layers.delete(digest);
    await rm(this.fileOf(digest), { force: true });
  }

  private fileOf(digest: string): string {
    return join(this.dir, digest.replace(':', '-'));
  }
}
