/**
 * Our own rules on what each overlay renders: probes on the actuator routes and limits on every
 * container, the Restricted Pod Security Standard, no `latest`, each process's environment as the
 * configuration reads it (every variable it needs, none it does not know), the Ingress reaching the
 * gateway only and no internal route, a KafkaTopic for every topic of the code, each service with a
 * database user of its own, and the sizes each overlay promises.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { isInternalOnly } from '../../gateway/proxy-routes';
import { DEFAULT_PORTS, SERVICE_NAMES, loadConfig, type Config, type ServiceName } from '../../platform/config';
import { TOPICS, deadLetterTopic } from '../../platform/events/topics';
import { STOP_BOUND_MS } from '../../platform/run';
import { SDK_VARIABLES, knownVariables } from '../config-variables';
import { describeIf } from '../skip';
import {
  NEEDS_KUBECTL,
  OVERLAYS,
  ROOT,
  containerEnv,
  hasKubectl,
  named,
  ofKind,
  ourDeployments,
  podSpec,
  render,
  type Container,
  type Deployment,
  type K8sObject,
  type Overlay,
} from './manifests';

type Process = ServiceName | 'gateway';
const PROCESSES: Process[] = ['gateway', ...SERVICE_NAMES];

interface Hpa {
  spec: { minReplicas: number; maxReplicas: number; scaleTargetRef: { kind: string; name: string } };
}
interface Ingress {
  spec: { rules: { host: string; http: { paths: { path: string; pathType: string; backend: { service: { name: string; port: { name?: string; number?: number } } } }[] } }[] };
}
interface KafkaTopic {
  spec: { topicName?: string; partitions: number; replicas: number; config: Record<string, unknown> };
}
interface Kafka {
  spec: { kafka: { listeners: { name: string; port: number; tls: boolean }[]; config: Record<string, number | string | boolean> } };
}
interface MariaDb {
  spec: { port?: number; replicas?: number; replication?: { enabled?: boolean } };
}
interface DbUser {
  spec: { name?: string; passwordSecretKeyRef: { name: string; key: string }; maxUserConnections?: number };
}
interface Grant {
  spec: { username: string; database?: string; table?: string; privileges: string[] };
}

function processOf(objects: K8sObject[], name: Process): { container: Container; env: Record<string, string>; config: Config } {
  const container = podSpec(named<Deployment>(objects, 'Deployment', name)).containers[0];
  const { env } = containerEnv(objects, container);
  return { container, env, config: loadConfig(env) };
}

function hpaOf(objects: K8sObject[], deployment: string): K8sObject & Hpa {
  const found = ofKind<Hpa>(objects, 'HorizontalPodAutoscaler').find((hpa) => hpa.spec.scaleTargetRef.kind === 'Deployment' && hpa.spec.scaleTargetRef.name === deployment);
  if (!found) throw new Error(`no HorizontalPodAutoscaler for ${deployment}`);
  return found;
}

/** Whether a request path matches an Ingress path as Kubernetes defines it (Prefix: by whole `/` elements). */
function ingressMatches(rule: { path: string; pathType: string }, requestPath: string): boolean {
  if (rule.pathType === 'Exact') return requestPath === rule.path;
  const prefix = rule.path.split('/').filter(Boolean);
  const elements = requestPath.split('/').filter(Boolean);
  return prefix.every((element, i) => elements[i] === element);
}

/** The paths of the REST contract, each with whether it is internal (`x-internal`), its parameters filled in. */
function contractPaths(): { path: string; internal: boolean }[] {
  const document = parse(fs.readFileSync(path.join(ROOT, 'rest-compat', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).map(([template, item]) => ({
    path: template.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
    internal: item['x-internal'] === true || Object.values(item).some((operation) => (operation as { 'x-internal'?: boolean } | null)?.['x-internal'] === true),
  }));
}

/** The Restricted Pod Security Standard's rules (and ours: a read-only root filesystem) broken by a pod. */
function restrictedViolations(pod: ReturnType<typeof podSpec> & { hostNetwork?: boolean; hostPID?: boolean; hostIPC?: boolean }): string[] {
  const found: string[] = [];
  const podContext = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) found.push('shares a host namespace');
  const allowedVolumes = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== 'name');
    if (!type || !allowedVolumes.includes(type)) found.push(`volume ${volume.name} of type ${type}`);
  }
  for (const container of pod.containers) {
    const context = container.securityContext ?? {};
    const at = `container ${container.name}`;
    if (context.privileged === true) found.push(`${at} is privileged`);
    if (context.allowPrivilegeEscalation !== false) found.push(`${at} allows privilege escalation`);
    if ((context.runAsNonRoot ?? podContext.runAsNonRoot) !== true) found.push(`${at} may run as root`);
    if ((context.runAsUser ?? podContext.runAsUser) === 0) found.push(`${at} runs as user 0`);
    const seccomp = ((context.seccompProfile ?? podContext.seccompProfile) as { type?: string } | undefined)?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') found.push(`${at} has no seccomp profile`);
    const capabilities = (context.capabilities ?? {}) as { drop?: string[]; add?: string[] };
    if (!capabilities.drop?.includes('ALL')) found.push(`${at} keeps its capabilities`);
    if ((capabilities.add ?? []).some((capability) => capability !== 'NET_BIND_SERVICE')) found.push(`${at} adds capabilities`);
    if (context.readOnlyRootFilesystem !== true) found.push(`${at} writes its root filesystem`);
    const tmp = container.volumeMounts?.find((mount) => mount.mountPath === '/tmp');
    if (!tmp || !pod.volumes?.some((volume) => volume.name === tmp.name && volume.emptyDir !== undefined)) found.push(`${at} has no writable /tmp`);
  }
  return found;
}

describeIf(hasKubectl, 'the rendered manifests', NEEDS_KUBECTL, () => {
  describe.each(OVERLAYS)('the %s overlay', (overlay: Overlay) => {
    const objects = () => render(overlay);

    it('gives every container readiness and liveness probes, our processes on the actuator routes of their own port', () => {
      const missing: string[] = [];
      for (const deployment of ofKind<Deployment>(objects(), 'Deployment')) {
        for (const container of podSpec(deployment).containers) {
          const at = `${deployment.metadata.name}/${container.name}`;
          if (!container.readinessProbe) missing.push(`${at}: no readiness probe`);
          if (!container.livenessProbe) missing.push(`${at}: no liveness probe`);
        }
      }
      expect(missing).toEqual([]);
      for (const name of PROCESSES) {
        const { container, config } = processOf(objects(), name);
        const httpPort = container.ports?.find((port) => port.name === 'http')?.containerPort;
        expect([name, httpPort]).toEqual([name, config.ports[name]]);
        expect([name, container.readinessProbe?.httpGet]).toEqual([name, { path: name === 'gateway' ? '/actuator/info' : '/actuator/health', port: 'http' }]);
        expect([name, container.livenessProbe?.httpGet]).toEqual([name, { path: '/actuator/info', port: 'http' }]);
        expect([name, container.startupProbe?.httpGet]).toEqual([name, { path: '/actuator/info', port: 'http' }]);
        // A start may wait for MariaDB and Kafka up to STARTUP_TIMEOUT_MS before it gives up: the startup probe waits longer.
        const startupWindowS = (container.startupProbe?.periodSeconds ?? 10) * (container.startupProbe?.failureThreshold ?? 3);
        expect(startupWindowS * 1000).toBeGreaterThan(config.startupTimeoutMs);
      }
    });

    it('sets cpu and memory requests and limits on every container', () => {
      const missing = ourDeployments(objects()).flatMap((deployment) =>
        podSpec(deployment).containers.flatMap((container) =>
          ['requests', 'limits'].flatMap((kind) =>
            ['cpu', 'memory']
              .filter((resource) => !container.resources?.[kind as 'requests' | 'limits']?.[resource])
              .map((resource) => `${deployment.metadata.name}: no ${resource} ${kind}`),
          ),
        ),
      );
      expect(missing).toEqual([]);
      const operated = [...ofKind(objects(), 'KafkaNodePool'), ...ofKind(objects(), 'MariaDB')].filter((object) => {
        const { resources } = object.spec as { resources?: { requests?: object; limits?: object } };
        return !resources?.requests || !resources.limits;
      });
      expect(operated.map((object) => object.metadata.name)).toEqual([]);
    });

    it('runs every pod of ours under the Restricted Pod Security Standard, with a read-only root filesystem and a writable /tmp', () => {
      const violations = ourDeployments(objects()).flatMap((deployment) =>
        restrictedViolations(podSpec(deployment)).map((violation) => `${deployment.metadata.name}: ${violation}`),
      );
      expect(violations).toEqual([]);
      for (const deployment of ourDeployments(objects()))
        expect([deployment.metadata.name, podSpec(deployment).automountServiceAccountToken]).toEqual([deployment.metadata.name, false]);
    });

    it('pins every image to a tag other than latest, the same one for all our processes', () => {
      const images = ourDeployments(objects()).flatMap((deployment) => podSpec(deployment).containers.map((container) => container.image));
      const mariaDbImages = ofKind<MariaDb & { spec: { image: string } }>(objects(), 'MariaDB').map((db) => db.spec.image);
      for (const image of [...images, ...mariaDbImages]) {
        expect(image).toMatch(/^[^@\s]+:[A-Za-z0-9_.-]+$/);
        expect(image).not.toMatch(/:latest$/);
      }
      expect(new Set(images).size).toBe(1);
    });

    it("lets each pod finish its drain before it is killed: a preStop pause, then longer than the process's own stop bound", () => {
      for (const deployment of ourDeployments(objects())) {
        const pod = podSpec(deployment);
        const pause = Number(pod.containers[0].lifecycle?.preStop?.exec?.command.at(-1) ?? 0);
        expect([deployment.metadata.name, pause > 0]).toEqual([deployment.metadata.name, true]);
        expect((pod.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(STOP_BOUND_MS + pause * 1000);
      }
    });

    it('gives the gateway and every service a Service, a PodDisruptionBudget and an autoscaler, within the topic partitions', () => {
      const { config } = processOf(objects(), 'auth');
      for (const name of PROCESSES) {
        const service = named<{ spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } }>(objects(), 'Service', name);
        expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': name });
        expect(service.spec.ports).toEqual([{ name: 'http', port: DEFAULT_PORTS[name], targetPort: 'http' }]);
        const pdb = named<{ spec: { maxUnavailable?: number; minAvailable?: number; selector: { matchLabels: Record<string, string> } } }>(objects(), 'PodDisruptionBudget', name);
        expect(pdb.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': name });
        expect(pdb.spec.maxUnavailable).toBe(1);
        const hpa = hpaOf(objects(), name);
        expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
        // Replicas of a service beyond the partitions of its topics would only stand by.
        if (name !== 'gateway') expect([name, hpa.spec.maxReplicas <= config.kafkaPartitions]).toEqual([name, true]);
        // Replicas are the autoscaler's: a re-apply must not reset them.
        expect((named(objects(), 'Deployment', name).spec as { replicas?: number }).replicas).toBeUndefined();
      }
    });

    it.each(SERVICE_NAMES)("gives the %s service an environment the configuration accepts: its own database user, Kafka, its port, the others' Services", (name) => {
      const all = objects();
      const { config } = processOf(all, name);
      const mariaDb = ofKind<MariaDb>(all, 'MariaDB')[0];
      const dbHost = `${mariaDb.metadata.name}${mariaDb.spec.replication?.enabled ? '-primary' : ''}:${mariaDb.spec.port ?? 3306}`;
      const user = ofKind<DbUser>(all, 'User').find((candidate) => (candidate.spec.name ?? candidate.metadata.name) === `bookstore_${name}`);
      expect(user).toBeDefined();
      expect(config.dbUrl).toBe(`mysql://bookstore_${name}:${user?.spec.passwordSecretKeyRef.name}.${user?.spec.passwordSecretKeyRef.key}@${dbHost}`);
      const kafka = ofKind<Kafka>(all, 'Kafka')[0];
      const plain = kafka.spec.kafka.listeners.find((listener) => !listener.tls);
      expect(config.kafkaBrokers).toEqual([`${kafka.metadata.name}-kafka-bootstrap:${plain?.port}`]);
      expect(config.eventNamespace).toBe('');
      expect(config.bindHost).toBe('0.0.0.0');
      for (const other of SERVICE_NAMES) expect(config.urls[other]).toBe(`http://${other}:${DEFAULT_PORTS[other]}`);
      expect(config.internalApiKey).toBe('bookstore-internal.INTERNAL_API_KEY');
      // DATA_DIR is a writable volume of the pod.
      const { container } = processOf(all, name);
      expect(container.volumeMounts?.some((mount) => path.resolve(mount.mountPath) === config.dataDir && !mount.readOnly)).toBe(true);
    });

    it('gives the payment service its Stripe keys from a Secret', () => {
      const { config } = processOf(objects(), 'payment');
      expect(config.stripe).toMatchObject({ secretKey: 'sk_test_from_secret', webhookSecret: 'whsec_from_secret' });
      if (overlay === 'dev') {
        const simulator = named<{ spec: { ports: { port: number }[] } }>(objects(), 'Service', 'stripe-simulator');
        expect(config.stripe.apiUrl).toBe(`http://stripe-simulator:${simulator.spec.ports[0].port}`);
      } else expect(config.stripe.apiUrl).toBeUndefined();
    });

    it("keeps the auth service's signing key in a Secret mounted read-only, the same for every replica", () => {
      const { container, config } = processOf(objects(), 'auth');
      const mount = container.volumeMounts?.find((candidate) => config.jwt.privateKeyFile.startsWith(`${candidate.mountPath}/`));
      expect(mount?.readOnly).toBe(true);
      const volume = podSpec(named<Deployment>(objects(), 'Deployment', 'auth')).volumes?.find((candidate) => candidate.name === mount?.name);
      expect(volume?.secret?.secretName).toBe('bookstore-jwt');
    });

    it('keeps book covers where every replica finds them: an S3 bucket in prod, the single pod in dev', () => {
      const { env, config } = processOf(objects(), 'book');
      if (overlay === 'prod') {
        expect(config.covers.s3?.bucket).toBeTruthy();
        for (const variable of SDK_VARIABLES) expect(env[variable]).toBe(`bookstore-s3.${variable}`);
      } else {
        expect(config.covers.s3).toBeUndefined();
        expect(hpaOf(objects(), 'book').spec.minReplicas).toBe(1);
      }
    });

    it('runs the gateway with only the trusted documents, no Apollo telemetry, believing the cluster network as its proxies', () => {
      const { config } = processOf(objects(), 'gateway');
      expect(config.trustedDocuments).toBe('enforce');
      expect(config.apolloTelemetryDisabled).toBe(true);
      expect(config.trustProxy.frontProxies.length).toBeGreaterThan(0);
      for (const name of PROCESSES) expect(processOf(objects(), name).config.trustProxy.gatewayAddresses).toEqual(config.trustProxy.frontProxies);
    });

    it('sets no variable the code does not read, but those composed into another', () => {
      const known = knownVariables();
      const unknown = ourDeployments(objects()).flatMap((deployment) => {
        const { env, referenced } = containerEnv(objects(), podSpec(deployment).containers[0]);
        const composedSomewhere = new Set(ourDeployments(objects()).flatMap((other) => [...containerEnv(objects(), podSpec(other).containers[0]).referenced]));
        return Object.keys(env)
          .filter((variable) => !known.has(variable) && !SDK_VARIABLES.includes(variable) && !referenced.has(variable) && !composedSomewhere.has(variable))
          .map((variable) => `${deployment.metadata.name}: ${variable}`);
      });
      expect(unknown).toEqual([]);
    });

    it('routes the Ingress to the gateway only, every public route of the contract through it and no internal or actuator route', () => {
      const ingresses = ofKind<Ingress>(objects(), 'Ingress');
      expect(ingresses).toHaveLength(1);
      const paths = ingresses[0].spec.rules.flatMap((rule) => rule.http.paths);
      expect(new Set(paths.map((rule) => `${rule.backend.service.name}:${rule.backend.service.port.name ?? ''}`))).toEqual(new Set(['gateway:http']));
      const reachable = (requestPath: string) => paths.some((rule) => ingressMatches(rule, requestPath)) && !isInternalOnly(requestPath);
      // The actuator routes (health, metrics) are for the cluster: the probes and Prometheus reach each pod.
      const contract = contractPaths().map(({ path: requestPath, internal }) => ({ path: requestPath, internal: internal || requestPath.startsWith('/actuator/') }));
      expect(contract.filter(({ internal }) => internal).length).toBeGreaterThan(3);
      expect(contract.filter(({ path: requestPath, internal }) => reachable(requestPath) === internal)).toEqual([]);
      for (const requestPath of ['/actuator/health', '/actuator/prometheus', '/actuator/info', '/api/user/create', '/auth/internal/revoked-sessions']) {
        expect([requestPath, reachable(requestPath)]).toEqual([requestPath, false]);
      }
      for (const requestPath of ['/graphql', '/admin/', '/docs', '/openapi.json']) expect([requestPath, reachable(requestPath)]).toEqual([requestPath, true]);
    });

    it('declares a KafkaTopic for every topic of the code and its dead-letter topic, with the partitions the services use', () => {
      const topics = ofKind<KafkaTopic>(objects(), 'KafkaTopic');
      const names = topics.map((topic) => topic.spec.topicName ?? topic.metadata.name).sort();
      const expected = Object.values(TOPICS).flatMap((topic) => [topic, deadLetterTopic(topic)]);
      expect(names).toEqual(expected.sort());
      const { config } = processOf(objects(), 'order');
      const kafka = ofKind<Kafka>(objects(), 'Kafka')[0];
      for (const topic of topics) {
        expect([topic.metadata.name, topic.spec.partitions]).toEqual([topic.metadata.name, config.kafkaPartitions]);
        expect(topic.metadata.labels?.['strimzi.io/cluster']).toBe(kafka.metadata.name);
      }
    });

    it('gives each service a database, and a user of its own granted that database only, with connections for its most replicas', () => {
      const all = objects();
      const { config } = processOf(all, 'auth');
      const grants = ofKind<Grant>(all, 'Grant');
      for (const name of SERVICE_NAMES) {
        const database = `${config.dbPrefix}${name}`;
        const username = `bookstore_${name}`;
        expect(ofKind<{ spec: { name?: string } }>(all, 'Database').some((db) => (db.spec.name ?? db.metadata.name) === database)).toBe(true);
        const own = grants.filter((grant) => grant.spec.username === username);
        expect(own.map((grant) => [grant.spec.database, grant.spec.table ?? '*'])).toEqual([[database, '*']]);
        const user = ofKind<DbUser>(all, 'User').find((candidate) => (candidate.spec.name ?? candidate.metadata.name) === username);
        const { container } = processOf(all, name);
        const passwordRef = container.env?.find((variable) => variable.name === 'DB_PASSWORD')?.valueFrom?.secretKeyRef;
        expect(user?.spec.passwordSecretKeyRef).toEqual({ name: passwordRef?.name, key: passwordRef?.key });
        // Each replica's pool holds 10 connections (platform/database.ts).
        expect(user?.spec.maxUserConnections ?? 10).toBeGreaterThanOrEqual(10 * hpaOf(all, name).spec.maxReplicas);
      }
    });

    it('closes every pod to connections by default and opens the gateway alone to the outside', () => {
      const policies = ofKind<{ spec: { podSelector: { matchLabels?: Record<string, string> }; ingress?: { from?: unknown[] }[] } }>(objects(), 'NetworkPolicy');
      const denyAll = policies.find((policy) => Object.keys(policy.spec.podSelector.matchLabels ?? {}).length === 0);
      expect(denyAll?.spec.ingress ?? []).toEqual([]);
      const open = policies.filter((policy) => (policy.spec.ingress ?? []).some((rule) => !rule.from));
      expect(open.map((policy) => policy.spec.podSelector.matchLabels)).toEqual([{ 'app.kubernetes.io/component': 'gateway' }]);
    });
  });

  it('runs one replica of everything in dev', () => {
    const objects = render('dev');
    for (const name of PROCESSES) expect([name, hpaOf(objects, name).spec.minReplicas]).toEqual([name, 1]);
    expect(ofKind<{ spec: { replicas: number } }>(objects, 'KafkaNodePool').map((pool) => pool.spec.replicas)).toEqual([1]);
    expect(ofKind<MariaDb>(objects, 'MariaDB')[0].spec.replicas).toBe(1);
  });

  it('runs three replicas of the gateway and every service in prod, three Kafka brokers at replication factor 3 and min.insync.replicas 2, MariaDB replicated', () => {
    const objects = render('prod');
    for (const name of PROCESSES) expect([name, hpaOf(objects, name).spec.minReplicas]).toEqual([name, 3]);
    const pools = ofKind<{ spec: { replicas: number; roles: string[] } }>(objects, 'KafkaNodePool');
    expect(pools.filter((pool) => pool.spec.roles.includes('broker')).reduce((sum, pool) => sum + pool.spec.replicas, 0)).toBe(3);
    expect(pools.filter((pool) => pool.spec.roles.includes('controller')).reduce((sum, pool) => sum + pool.spec.replicas, 0)).toBe(3);
    const { config } = ofKind<Kafka>(objects, 'Kafka')[0].spec.kafka;
    expect(config).toMatchObject({
      'default.replication.factor': 3,
      'min.insync.replicas': 2,
      'offsets.topic.replication.factor': 3,
      'transaction.state.log.replication.factor': 3,
      'transaction.state.log.min.isr': 2,
    });
    for (const topic of ofKind<KafkaTopic>(objects, 'KafkaTopic'))
      expect([topic.metadata.name, topic.spec.replicas, topic.spec.config['min.insync.replicas']]).toEqual([topic.metadata.name, 3, 2]);
    const mariaDb = ofKind<MariaDb>(objects, 'MariaDB')[0];
    expect(mariaDb.spec.replicas).toBe(3);
    expect(mariaDb.spec.replication?.enabled).toBe(true);
  });
});
