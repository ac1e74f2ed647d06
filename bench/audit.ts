import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Components } from '../dev/components.ts';

/** One request the API server answered, as its audit log records it. */
export interface AuditedRequest {
  readonly verb: string;
  readonly uri: string;
  readonly userAgent: string;
  readonly code: number;
  /** When the API server received it, ms since the epoch. */
  readonly at: number;
}

interface AuditLine {
  readonly verb: string;
  readonly requestURI: string;
  readonly userAgent?: string;
  readonly user?: { readonly username?: string };
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp: string;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Whether a request changed something: a write verb that is not a dry-run. */
export const isWrite = (r: AuditedRequest) => WRITE_VERBS.has(r.verb) && !/[?&]dryRun=/.test(r.uri);

/**
 * Starts counting the requests the bench's user makes: every audit-log line written after this
 * call, read when `stop` is called. The API server writes the line before it answers (blocking
 * audit mode), so nothing is missed once the last response has arrived.
 */
export function auditWindow(components: Components): { stop(): AuditedRequest[] } {
  const path = components.kube.auditLog;
  const start = statSync(path).size;
  return {
    stop() {
      const end = statSync(path).size;
      const buffer = Buffer.alloc(end - start);
      const fd = openSync(path, 'r');
      try {
        readSync(fd, buffer, 0, buffer.length, start);
      } finally {
        closeSync(fd);
      }
      return buffer
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditLine)
        .filter((e) => e.user?.username === 'sluice-admin')
        .map((e) => ({
          verb: e.verb,
          uri: e.requestURI,
          userAgent: e.userAgent ?? '',
          code: e.responseStatus?.code ?? 0,
          at: Date.parse(e.requestReceivedTimestamp),
        }));
    },
  };
}

/** `count × verb path` lines, most frequent first, query strings dropped: what a run asked for. */
export function summariseRequests(requests: readonly AuditedRequest[]): string[] {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const key = `${r.verb}${isWrite(r) ? '' : WRITE_VERBS.has(r.verb) ? ' (dry-run)' : ''} ${r.uri.split('?')[0]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([key, n]) => `${n} × ${key}`);
}
