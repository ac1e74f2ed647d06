import { readFileSync } from 'node:fs';
import type { Components } from '../../dev/components.ts';

interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  readonly objectRef?: { readonly namespace?: string; readonly name?: string };
  readonly requestReceivedTimestamp: string;
}

/** Requests that changed something in namespace `ns` after `since`, from the API server's audit log (dry-runs excluded). */
export function writesSince(bed: Components, ns: string, since: string): string[] {
  return readFileSync(bed.kube.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.objectRef?.namespace === ns && e.requestReceivedTimestamp > since)
    .filter(
      (e) => ['create', 'update', 'patch', 'delete'].includes(e.verb) && !e.requestURI.includes('dryRun'),
    )
    .map((e) => `${e.verb} ${e.requestURI}`);
}

/** The list requests after `since` whose label selector names `delivery`, from the audit log: their paths. */
export function listsSince(bed: Components, delivery: string, since: string): string[] {
  return readFileSync(bed.kube.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.verb === 'list' && e.requestReceivedTimestamp > since)
    .filter((e) => decodeURIComponent(e.requestURI).includes(`=${delivery}`))
    .map((e) => e.requestURI.split('?')[0]!);
}

/** Every request after `since` to a path starting with `prefix`, from the audit log: verb and path. */
export function requestsSince(bed: Components, prefix: string, since: string): string[] {
  return readFileSync(bed.kube.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.requestReceivedTimestamp > since && e.requestURI.startsWith(prefix))
    .map((e) => `${e.verb} ${e.requestURI.split('?')[0]!}`);
}
