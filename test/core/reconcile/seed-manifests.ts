/** The seed's manifests (Flux prune walkthrough), in namespace `ns`. */
export function seedManifests(ns: string, options: { withPdb: boolean }): string {
  const docs = [
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: oddy-test-deployment
  namespace: ${ns}
  labels:
    app: oddy-test
spec:
  selector:
    matchLabels:
      app: oddy-test-deployment
  template:
    metadata:
      labels:
        app: oddy-test-deployment
    spec:
      containers:
        - name: oddy-test-deployment
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.7`,
    `apiVersion: v1
kind: Service
metadata:
  labels:
    app: oddy-test
  name: oddy-test-service
  namespace: ${ns}
spec:
  ports:
    - protocol: TCP
      port: 80
      targetPort: 80
  selector:
    app: oddy-test-deployment
  type: ClusterIP`,
    `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: oddy-test-hpa
  namespace: ${ns}
  labels:
    app: oddy-test
spec:
  maxReplicas: 2
  minReplicas: 1
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: oddy-test-deployment
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 70`,
  ];
  if (options.withPdb) {
    docs.push(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: oddy-test-pdb
  namespace: ${ns}
  labels:
    app: oddy-test
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: oddy-test-deployment`);
  }
  return `${docs.join('\n---\n')}\n`;
}
