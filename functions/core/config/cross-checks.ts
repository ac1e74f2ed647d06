// Checks across a whole config: names used once, gate references known, dependencies without
// cycles, one clusterConcurrency per cluster.
import * as z from 'zod';
import { DEFAULTS } from './defaults.ts';
import { clusterKey } from './cluster-key.ts';
import { closest, isRecord } from './issues.ts';

/** Names used twice, unknown gate references: checked on whatever parsed, so they are reported with the rest. */
export function crossCheck(config: Record<string, unknown>, ctx: z.core.$RefinementCtx): void {
  const gates = Array.isArray(config.gates) ? (config.gates as unknown[]) : [];
  const deliveries = Array.isArray(config.deliveries) ? (config.deliveries as unknown[]) : [];
  const nameOf = (item: unknown) => (isRecord(item) && typeof item.name === 'string' ? item.name : undefined);

  for (const [field, list] of [
    ['gates', gates],
    ['deliveries', deliveries],
  ] as const) {
    const first = new Map<string, number>();
    list.forEach((item, index) => {
      const itemName = nameOf(item);
      if (itemName === undefined) return;
      const earlier = first.get(itemName);
      if (earlier === undefined) first.set(itemName, index);
      else {
        const what = field === 'gates' ? 'gate' : 'delivery';
        ctx.addIssue({
          code: 'custom',
          message: `duplicate ${what} name "${itemName}" (also ${field}[${earlier}])`,
          path: [field, index, 'name'],
        });
      }
    });
  }

  if (config.gates !== undefined && !Array.isArray(config.gates)) return;
  const defined = new Set(gates.map(nameOf).filter((gateName) => gateName !== undefined));
  deliveries.forEach((delivery, index) => {
    if (!isRecord(delivery)) return;
    const deliveryName = nameOf(delivery);
    const check = (gateName: string | undefined, path: (string | number)[]) => {
      if (gateName === undefined || defined.has(gateName)) return;
      const near = closest(gateName, defined);
      const who = deliveryName === undefined ? 'references' : `delivery "${deliveryName}" references`;
      const where = defined.size === 0 ? 'no gates are defined' : `defined: ${[...defined].join(', ')}`;
      ctx.addIssue({
        code: 'custom',
        message: `${who} gate "${gateName}", which is not defined in gates (${near ? `did you mean "${near}"? ` : ''}${where})`,
        path: ['deliveries', index, ...path],
      });
    };
    if (Array.isArray(delivery.gates))
      delivery.gates.forEach((ref: unknown, refIndex: number) =>
        check(nameOf(ref), ['gates', refIndex, 'name']),
      );
    if (typeof delivery.pruneLimitGate === 'string') check(delivery.pruneLimitGate, ['pruneLimitGate']);
  });
  checkDependencies(deliveries, ctx);
  checkClusterConcurrency(deliveries, ctx);
}

/** Deliveries on one cluster agree on its clusterConcurrency (an unset one counts as the default). */
function checkClusterConcurrency(deliveries: readonly unknown[], ctx: z.RefinementCtx): void {
  const first = new Map<string, { name: unknown; concurrency: number; set: boolean }>();
  deliveries.forEach((delivery, index) => {
    if (!isRecord(delivery) || !isRecord(delivery.cluster)) return;
    const cluster = delivery.cluster as Record<string, unknown>;
    const eks = isRecord(cluster.eks) ? (cluster.eks as Record<string, unknown>) : undefined;
    const target =
      eks && typeof eks.name === 'string' && typeof eks.region === 'string'
        ? { eks: { name: eks.name, region: eks.region, roleArn: eks.roleArn as string | undefined } }
        : typeof cluster.kubeconfig === 'string'
          ? { kubeconfig: cluster.kubeconfig, context: cluster.context as string | undefined }
          : undefined;
    if (!target) return;
    const key = clusterKey(target);
    const set = typeof delivery.clusterConcurrency === 'number';
    const concurrency = set ? (delivery.clusterConcurrency as number) : DEFAULTS.clusterConcurrency;
    const seen = first.get(key);
    if (!seen) {
      first.set(key, { name: delivery.name, concurrency, set });
      return;
    }
    if (seen.concurrency === concurrency) return;
    const said = (c: number, explicit: boolean) => (explicit ? `${c}` : `${c}, the default`);
    ctx.addIssue({
      code: 'custom',
      message: `clusterConcurrency ${said(concurrency, set)} differs from delivery "${String(seen.name)}" on the same cluster (${said(seen.concurrency, seen.set)}): deliveries on one cluster share its limit, so set the same value on each`,
      path: ['deliveries', index, 'clusterConcurrency'],
    });
  });
}

/** The `dependsOn` names of a delivery as written (`name` or `{ name }`). */
function dependencyNames(delivery: unknown): (string | undefined)[] {
  if (!isRecord(delivery) || !Array.isArray(delivery.dependsOn)) return [];
  return delivery.dependsOn.map((ref: unknown) =>
    typeof ref === 'string' ? ref : isRecord(ref) && typeof ref.name === 'string' ? ref.name : undefined,
  );
}

/** Every `dependsOn` names another delivery of the config, and following them never comes back. */
function checkDependencies(deliveries: readonly unknown[], ctx: z.RefinementCtx): void {
  const nameOf = (item: unknown) => (isRecord(item) && typeof item.name === 'string' ? item.name : undefined);
  const defined = new Set(deliveries.map(nameOf).filter((n) => n !== undefined));
  const edges = new Map<string, string[]>();
  deliveries.forEach((delivery, index) => {
    const own = nameOf(delivery);
    const names = dependencyNames(delivery);
    names.forEach((dependency, refIndex) => {
      if (dependency === undefined) return;
      const path = ['deliveries', index, 'dependsOn', refIndex];
      if (dependency === own) {
        ctx.addIssue({ code: 'custom', message: `delivery "${own}" cannot depend on itself`, path });
      } else if (!defined.has(dependency)) {
        const near = closest(dependency, defined);
        ctx.addIssue({
          code: 'custom',
          message: `delivery "${own ?? index}" depends on "${dependency}", which is not defined in deliveries${near ? ` (did you mean "${near}"?)` : ''}`,
          path,
        });
      }
    });
    if (own !== undefined)
      edges.set(
        own,
        names.filter((n): n is string => n !== undefined && n !== own && defined.has(n)),
      );
  });
  const cycle = findCycle(edges);
  if (cycle) {
    const index = deliveries.findIndex((d) => nameOf(d) === cycle[0]);
    ctx.addIssue({
      code: 'custom',
      message: `dependsOn forms a cycle: ${cycle.join(' → ')}`,
      path: ['deliveries', index, 'dependsOn'],
    });
  }
}

/** A path that returns to where it started (`a → b → a`), if the graph has one. */
function findCycle(edges: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string[] | undefined => {
    const seen = path.indexOf(node);
    if (seen !== -1) return [...path.slice(seen), node];
    if (done.has(node)) return undefined;
    for (const next of edges.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of edges.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}
