// Every object a side has in the cluster, whatever its kind and whether or not it carries the
// tool's owner label: every resource discovery says can be listed is listed, and a side's objects
// are those in its namespaces (`sluice-<scenario>…`, `flux-<scenario>…`) or, cluster-scoped, named
// for it.
import type { BenchContext } from '../context.ts';
import { kubectl } from '../kubectl.ts';
import type { Live } from './parity-compare.ts';
import type { Side } from './parity-scenarios.ts';

/** Written by the API server about objects, not by either tool: left out. */
const NOT_COMPARED = new Set(['events', 'events.events.k8s.io']);

/** Every resource the API server serves with the `list` verb, as `kubectl get` names them (`deployments.apps`). */
async function listableResources(ctx: BenchContext): Promise<string[]> {
  const { stdout } = await kubectl(
    ctx.components,
    ['api-resources', '--verbs=list', '-o', 'name'],
    ctx.kubectlCache,
  );
  const names = stdout.split('\n').map((line) => line.trim());
  return names.filter((name) => name && !NOT_COMPARED.has(name));
}

/**
 * Whether `object` is the scenario's on `side`: in a namespace `<side>-<scenario>…`, or
 * cluster-scoped and so named or of the API group `<scenario>.sp|fp.sluice.io` (a CRD).
 */
function belongsTo(object: Live, side: Side, scenario: string): boolean {
  const prefix = `${side}-${scenario}`;
  const group = `.${scenario}.${side === 'sluice' ? 'sp' : 'fp'}.`;
  const namespace = object.metadata.namespace as string | undefined;
  if (namespace) return namespace.startsWith(prefix);
  const name = String(object.metadata.name);
  return name.startsWith(prefix) || name.includes(group);
}

/**
 * Both sides' objects of `scenario`, from one listing of every listable resource in all namespaces, managed
 * fields included. Lists again while discovery changes under it (a CRD just created or deleted).
 */
export async function liveObjects(ctx: BenchContext, scenario: string): Promise<Record<Side, Live[]>> {
  for (let attempt = 1; ; attempt++) {
    // kubectl caches discovery: a CRD created or pruned since must be seen.
    const resources = await listableResources(ctx);
    try {
      const { stdout } = await kubectl(
        ctx.components,
        ['get', resources.join(','), '-A', '-o', 'json', '--show-managed-fields'],
        ctx.kubectlCache,
      );
      const items = (JSON.parse(stdout) as { items: Live[] }).items;
      return {
        sluice: items.filter((o) => belongsTo(o, 'sluice', scenario)),
        flux: items.filter((o) => belongsTo(o, 'flux', scenario)),
      };
    } catch (error) {
      if (attempt >= 5)
        throw new Error(`listing every served kind failed ${attempt} times: ${String(error)}`);
    }
  }
}
