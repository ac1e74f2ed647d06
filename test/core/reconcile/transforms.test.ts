// The delivery's own transforms (Flux Kustomization semantics): targetNamespace, commonMetadata,
// postBuild.substitute.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { engineDeps, pushFiles, registerDelivery, run } from '../../support/deliveries.ts';
import { createNamespace, testbed, uniqueName } from '../../support/testbed.ts';

const bed = testbed();
const deps = engineDeps();
const kc = bed.kubeConfig();

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: \${replicas}
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx:\${version:=1.27}
`;
const literal = `apiVersion: v1
kind: ConfigMap
metadata:
  name: script
  annotations:
    sluice.io/substitute: disabled
data:
  run.sh: echo \${HOME}
`;

// An artifact made for Flux keeps its meaning: Flux's annotation works as sluice's.
const literalForFlux = literal
  .replace('name: script', 'name: flux-script')
  .replace('sluice.io/substitute', 'kustomize.toolkit.fluxcd.io/substitute');

describe('delivery transforms', () => {
  it('sets the namespace, adds common labels and annotations, and substitutes variables with types kept', async () => {
    const ns = uniqueName('tx');
    const repository = uniqueName('tx/app');
    const name = uniqueName('tx');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', {
      'deploy.yaml': deployment,
      'script.yaml': literal,
      'flux-script.yaml': literalForFlux,
    });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      targetNamespace: ns,
      commonMetadata: { labels: { team: 'payments' }, annotations: { 'example.com/owner': 'alice' } },
      postBuild: { substitute: { replicas: '3' } },
    });
    expect(await run(name, deps)).toMatchObject({ outcome: 'Succeeded', changes: { created: 3 } });
    const web = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'web', namespace: ns });
    expect(web.spec?.replicas).toBe(3);
    expect(web.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.27');
    expect(web.metadata?.labels).toMatchObject({ team: 'payments', 'sluice.io/delivery': name });
    expect(web.metadata?.annotations).toMatchObject({ 'example.com/owner': 'alice' });
    const script = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'script', namespace: ns });
    expect(script.data?.['run.sh']).toBe('echo ${HOME}');
    const fluxScript = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'flux-script', namespace: ns });
    expect(fluxScript.data?.['run.sh']).toBe('echo ${HOME}');
    expect((await run(name, deps)).changes).toMatchObject({ unchanged: 3, configured: 0 });
  });

  it('fails naming the object and the variable when a variable is undefined, applying nothing', async () => {
    const ns = uniqueName('tx');
    const repository = uniqueName('tx/missing');
    const name = uniqueName('txmissing');
    await createNamespace(kc, ns);
    await pushFiles(bed, repository, 'main', { 'deploy.yaml': deployment });
    await registerDelivery(deps, bed, {
      name,
      repository,
      prune: true,
      targetNamespace: ns,
      postBuild: { substitute: { version: '1.26' } },
    });
    const result = await run(name, deps);
    expect(result).toMatchObject({ outcome: 'Failed', reason: 'ValidationFailed' });
    expect(result.message).toMatch(/deploy\.yaml: Deployment\/web: variable "replicas" is not defined/);
    const list = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: ns });
    expect(list.items).toEqual([]);
  });
});
