import { stringify } from 'yaml';

/** A small app of the Flux benchmarks: a podinfo Deployment running as its own ServiceAccount, and its Service. */
export function podinfoApp(
  name: string,
  namespace: string,
  options: { readonly replicas: number; readonly targetPort: number },
): Record<string, unknown>[] {
  const labels = { app: name };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace, labels },
      spec: {
        replicas: options.replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            containers: [{ name: 'app', image: 'ghcr.io/stefanprodan/podinfo:6.7.0' }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels },
      spec: { selector: labels, ports: [{ port: 80, targetPort: options.targetPort }] },
    },
  ];
}

/** Objects as one multi-document YAML file, `app.yaml`. */
export const appFile = (objects: readonly unknown[]): Record<string, string> => ({
  'app.yaml': objects.map((o) => stringify(o)).join('---\n'),
});

/** Runs `tasks` at most `limit` at a time. */
export async function pool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}
