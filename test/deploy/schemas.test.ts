/**
 * Each overlay renders with `kubectl kustomize`, and every object it renders validates against its
 * kind's schema: kubernetes-models for Kubernetes' own kinds, @kubernetes-models/prometheus-operator
 * for PrometheusRule and ServiceMonitor, and the schemas of operator-schemas.ts (written from the
 * operators' API references) for Strimzi's and mariadb-operator's. A kind none of them knows fails.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describeIf } from '../skip';
import { NEEDS_KUBECTL, OVERLAYS, hasKubectl, render, type K8sObject } from './manifests';
import { operatorValidator } from './operator-schemas';

/**
 * What is wrong with each object by its kind's schema; a kind without one is itself a problem.
 * The kubernetes-models packages are ES modules only, so validate-models.mjs runs them in node.
 */
export function schemaProblems(objects: K8sObject[]): string[][] {
  const input = JSON.stringify(objects);
  const byModels = JSON.parse(execFileSync(process.execPath, [path.join(__dirname, 'validate-models.mjs')], { input, encoding: 'utf8', maxBuffer: 64 << 20 })) as (
    string[] | null
  )[];
  return objects.map((object, i) => {
    const fromModel = byModels[i];
    if (fromModel) return fromModel;
    const validate = operatorValidator(object.apiVersion, object.kind);
    return validate ? validate(object) : [`no schema for ${object.apiVersion} ${object.kind}`];
  });
}

/** How many objects of each kind an overlay renders. */
function census(objects: K8sObject[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { kind } of objects) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

const WORKLOADS = { Service: 7, Deployment: 7, PodDisruptionBudget: 7, HorizontalPodAutoscaler: 7 };
const COMMON = {
  ServiceAccount: 1,
  ConfigMap: 2,
  Ingress: 1,
  NetworkPolicy: 5,
  Kafka: 1,
  KafkaTopic: 28,
  MariaDB: 1,
  Database: 6,
  User: 6,
  Grant: 6,
  ServiceMonitor: 1,
  PrometheusRule: 1,
};

describeIf(hasKubectl, 'the Kubernetes manifests', NEEDS_KUBECTL, () => {
  it('renders the dev overlay: the gateway, six services and the Stripe simulator, one Kafka node pool', () => {
    expect(census(render('dev'))).toEqual({ ...COMMON, ...WORKLOADS, Deployment: 8, Service: 8, NetworkPolicy: 6, KafkaNodePool: 1 });
  });

  it('renders the prod overlay: the gateway and six services, controller and broker node pools', () => {
    expect(census(render('prod'))).toEqual({ ...COMMON, ...WORKLOADS, KafkaNodePool: 2 });
  });

  it.each(OVERLAYS)('puts every object of the %s overlay in its namespace', (overlay) => {
    const namespaces = new Set(render(overlay).map((object) => object.metadata.namespace));
    expect([...namespaces]).toEqual([overlay === 'prod' ? 'bookstore' : 'bookstore-dev']);
  });

  it.each(OVERLAYS)("validates every object of the %s overlay against its kind's schema", (overlay) => {
    const objects = render(overlay);
    const problems = schemaProblems(objects).flatMap((found, i) => found.map((problem) => `${objects[i].kind} ${objects[i].metadata.name}: ${problem}`));
    expect(problems).toEqual([]);
  });

  it('refuses an object that breaks its schema, for every family of kinds', () => {
    const objects = render('prod');
    const broken = (kind: string, change: (copy: { spec: Record<string, unknown> }) => void): K8sObject => {
      const copy = structuredClone(objects.find((object) => object.kind === kind)) as K8sObject & { spec: Record<string, unknown> };
      change(copy);
      return copy;
    };
    const problems = schemaProblems([
      broken('Deployment', ({ spec }) => (spec.replicas = 'three')),
      broken('NetworkPolicy', ({ spec }) => (spec.podSelector = 'all')),
      broken('PrometheusRule', ({ spec }) => (spec.groups = 'none')),
      broken('KafkaTopic', ({ spec }) => (spec.partitions = 0)),
      broken('KafkaNodePool', ({ spec }) => delete spec.roles),
      broken('Kafka', ({ spec }) => ((spec.kafka as Record<string, unknown>).listner = [])),
      broken('MariaDB', ({ spec }) => (spec.replicas = '3')),
      broken('Grant', ({ spec }) => (spec.privileges = [])),
      broken('User', ({ spec }) => delete spec.mariaDbRef),
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
    ]);
    expect(problems.map((found) => found.length > 0)).toEqual(Array(10).fill(true));
    expect(problems[9]).toEqual(['no schema for example.com/v1 Widget']);
  });
});
