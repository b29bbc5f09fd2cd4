// Validates Kubernetes objects against kubernetes-models and @kubernetes-models/prometheus-operator,
// which ship as ES modules only: the suites under test/deploy (CommonJS, under Jest) run this with
// node, the objects as a JSON array on stdin. Prints, as JSON, one entry per object: null when its
// kind has no model here, else the list of what is wrong with it (empty when it validates).
import { readFileSync } from 'node:fs';

const MODULES = {
  'v1 ConfigMap': 'kubernetes-models/v1/ConfigMap',
  'v1 Secret': 'kubernetes-models/v1/Secret',
  'v1 Service': 'kubernetes-models/v1/Service',
  'v1 ServiceAccount': 'kubernetes-models/v1/ServiceAccount',
  'apps/v1 Deployment': 'kubernetes-models/apps/v1/Deployment',
  'autoscaling/v2 HorizontalPodAutoscaler': 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  'networking.k8s.io/v1 Ingress': 'kubernetes-models/networking.k8s.io/v1/Ingress',
  'networking.k8s.io/v1 NetworkPolicy': 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy',
  'policy/v1 PodDisruptionBudget': 'kubernetes-models/policy/v1/PodDisruptionBudget',
  'monitoring.coreos.com/v1 PrometheusRule': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule',
  'monitoring.coreos.com/v1 ServiceMonitor': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor',
};

const objects = JSON.parse(readFileSync(0, 'utf8'));
const results = [];
for (const object of objects) {
  const module = MODULES[`${object.apiVersion} ${object.kind}`];
  if (!module) {
    results.push(null);
    continue;
  }
  const Model = (await import(module))[object.kind];
  try {
    new Model(object).validate();
    results.push([]);
  } catch (error) {
    results.push([error.message]);
  }
}
process.stdout.write(JSON.stringify(results));
