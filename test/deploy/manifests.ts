/**
 * The Kubernetes manifests as the suites under test/deploy read them: each overlay rendered by
 * `kubectl kustomize` (no cluster needed), its objects by kind and name, and a container's
 * environment as the kubelet would build it (the ConfigMap, then `env` with `$(VAR)` expanded), with
 * a stand-in value for each Secret key it references.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = path.join(__dirname, '..', '..');
export const K8S_DIR = path.join(ROOT, 'deploy', 'k8s');
export const MONITORING_DIR = path.join(K8S_DIR, 'base', 'monitoring');
export const OVERLAYS = ['dev', 'prod'] as const;
export type Overlay = (typeof OVERLAYS)[number];

export const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
export const NEEDS_KUBECTL = 'needs kubectl, to render the Kustomize overlays';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** The objects `kubectl kustomize` renders from a kustomization directory. */
export function renderDir(dir: string): K8sObject[] {
  const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return parseAllDocuments(output)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

const rendered = new Map<Overlay, K8sObject[]>();

/** An overlay's objects, rendered once per test file. */
export function render(overlay: Overlay): K8sObject[] {
  let objects = rendered.get(overlay);
  if (!objects) {
    objects = renderDir(path.join(K8S_DIR, 'overlays', overlay));
    rendered.set(overlay, objects);
  }
  return objects;
}

export function ofKind<T = K8sObject>(objects: K8sObject[], kind: string): (K8sObject & T)[] {
  return objects.filter((object) => object.kind === kind) as (K8sObject & T)[];
}

export function named<T = K8sObject>(objects: K8sObject[], kind: string, name: string): K8sObject & T {
  const found = ofKind<T>(objects, kind).find((object) => object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string } };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

export interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}

export interface PodSpec {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; emptyDir?: unknown; secret?: { secretName: string } }[];
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
}

export interface Deployment {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}

export function podSpec(deployment: K8sObject & Deployment): PodSpec {
  return deployment.spec.template.spec;
}

/** A Secret key's stand-in: a value of the form the configuration accepts for the variable it feeds. */
function secretStandIn(ref: { name: string; key: string }): string {
  const byKey: Record<string, string> = {
    STRIPE_SECRET_KEY: 'sk_test_from_secret',
    STRIPE_WEBHOOK_SECRET: 'whsec_from_secret',
    SMTP_URL: 'smtps://mailer:password@smtp.example.com:465',
    BOOTSTRAP_ADMIN_EMAIL: 'admin@example.com',
  };
  return byKey[ref.key] ?? `${ref.name}.${ref.key}`;
}

/**
 * A container's environment as the kubelet builds it: `envFrom` first, then each `env` entry in
 * order, `$(VAR)` in a value replaced by a variable defined before it (left as written otherwise),
 * a Secret key by its stand-in. Also says which variables the values refer to as `$(VAR)`.
 */
export function containerEnv(objects: K8sObject[], container: Container): { env: Record<string, string>; referenced: Set<string> } {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, named<{ data: Record<string, string> }>(objects, 'ConfigMap', source.configMapRef.name).data);
  }
  const referenced = new Set<string>();
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) {
      env[variable.name] = variable.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => {
        referenced.add(name);
        return env[name] ?? whole;
      });
    } else if (variable.valueFrom?.secretKeyRef) {
      env[variable.name] = secretStandIn(variable.valueFrom.secretKeyRef);
    } else if (variable.valueFrom?.configMapKeyRef) {
      const { name, key } = variable.valueFrom.configMapKeyRef;
      env[variable.name] = named<{ data: Record<string, string> }>(objects, 'ConfigMap', name).data[key];
    }
  }
  return { env, referenced };
}

/** The Deployments of our own image: the gateway, the services (and the dev overlay's simulator). */
export function ourDeployments(objects: K8sObject[]): (K8sObject & Deployment)[] {
  return ofKind<Deployment>(objects, 'Deployment').filter((deployment) => podSpec(deployment).containers.some((container) => container.image.includes('bookstore')));
}
