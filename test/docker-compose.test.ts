/**
 * docker-compose.yml cannot run on the machines CI uses (no Docker engine), so it is checked by
 * reading it: every service is there with its command, port, health check and dependencies, and
 * each service's environment is one the code's configuration accepts and resolves as intended.
 * Secrets come only from the environment or .env (.env.example lists them), and only the gateway's
 * port is published (issue 18, findings 1 and 2).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_PORTS, SERVICE_NAMES, loadConfig } from '../platform/config';
import { SDK_VARIABLES, knownVariables } from './config-variables';

interface ComposeService {
  networks?: Record<string, { ipv4_address?: string } | null>;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
}

const root = path.join(__dirname, '..');
const composeText = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as { services: Record<string, ComposeService>; networks?: { default?: { ipam?: { config?: { subnet: string }[] } } } };
const services = compose.services;

/** The variables .env.example asks for (its uncommented `NAME=` lines). */
const exampleVariables = fs
  .readFileSync(path.join(root, '.env.example'), 'utf8')
  .split('\n')
  .map((line) => /^([A-Z_]+)=/.exec(line)?.[1])
  .filter((name): name is string => name !== undefined);

/** What an operator's .env would hold: a value for each variable .env.example lists. */
const operatorEnv: Record<string, string> = {
  INTERNAL_API_KEY: 'internal-key-from-env',
  MYSQL_ROOT_PASSWORD: 'root-password-from-env',
  MYSQL_PASSWORD: 'password-from-env',
  STRIPE_SECRET_KEY: 'sk_test_from_env',
  STRIPE_WEBHOOK_SECRET: 'whsec_from_env',
  MINIO_ROOT_PASSWORD: 'minio-password-from-env',
};

/**
 * A value as compose interpolates it: `${VAR:-default}` and `${VAR-default}` take the variable or
 * the default, `${VAR:?message}` the variable or compose stops with the message.
 */
function interpolate(value: string | number, env: Record<string, string>): string {
  return String(value).replace(/\$\{([A-Z0-9_]+)(:?[-?])([^}]*)\}/g, (_match, name: string, operator: string, rest: string) => {
    const set = env[name];
    const usable = operator.startsWith(':') ? set !== undefined && set !== '' : set !== undefined;
    if (usable) return set;
    if (operator.endsWith('?')) throw new Error(rest);
    return rest;
  });
}

function environmentOf(name: string, env: Record<string, string> = operatorEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(services[name].environment ?? {}).map(([key, value]) => [key, interpolate(value, env)]));
}

/** Services of images we do not build, configured by their own variables. */
const THIRD_PARTY = ['mysql', 'kafka', 'minio', 'minio-bucket', 'zipkin', 'mailpit'];
describe('docker-compose.yml', () => {
  it('runs MySQL 8.4 and Kafka 3.9 with health checks', () => {
    expect((services.mysql as { image?: string }).image).toBe('mysql:8.4');
    expect((services.kafka as { image?: string }).image).toMatch(/^apache\/kafka:3\.9\./);
    expect(services.mysql.healthcheck).toBeDefined();
    expect(services.kafka.healthcheck).toBeDefined();
  });

  it.each(SERVICE_NAMES)('runs the %s service from the image on its documented port, unpublished, after MySQL and Kafka are healthy', (name) => {
    const service = services[name];
    expect(service.command).toEqual(['node', `dist/subgraphs/${name}/main.js`]);
    expect(fs.existsSync(path.join(root, `subgraphs/${name}/main.ts`))).toBe(true);
    expect(loadConfig(environmentOf(name)).ports[name]).toBe(DEFAULT_PORTS[name]);
    expect(service.ports).toBeUndefined();
    expect(service.depends_on).toMatchObject({ mysql: { condition: 'service_healthy' }, kafka: { condition: 'service_healthy' } });
    expect(service.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${DEFAULT_PORTS[name]}/actuator/health`);
  });

  it.each(SERVICE_NAMES)("gives the %s service an environment the configuration accepts: MySQL, Kafka, its port, the others' addresses", (name) => {
    const env = environmentOf(name);
    const config = loadConfig(env);
    expect(config.dbUrl).toMatch(/^mysql:\/\/[^@]+@mysql:3306$/);
    expect(config.kafkaBrokers).toEqual(['kafka:9092']);
    expect(config.ports[name]).toBe(DEFAULT_PORTS[name]);
    expect(config.bindHost).toBe('0.0.0.0');
    for (const other of SERVICE_NAMES) expect(config.urls[other]).toBe(`http://${other}:${DEFAULT_PORTS[other]}`);
    expect(config.internalApiKey.length).toBeGreaterThan(0);
  });

  it('gives the payment service Stripe keys and the simulator, and the simulator the same webhook secret', () => {
    const payment = loadConfig(environmentOf('payment'));
    const simulator = loadConfig(environmentOf('stripe-simulator'));
    expect(payment.stripe.secretKey).toMatch(/^sk_test_/);
    expect(payment.stripe.apiUrl).toBe(`http://stripe-simulator:${simulator.stripe.simulatorPort}`);
    expect(payment.stripe.webhookSecret).toBe(simulator.stripe.webhookSecret);
    expect(services['stripe-simulator'].command).toEqual(['node', 'dist/simulators/stripe/main.js']);
    expect(simulator.urls.payment).toBe(`http://payment:${DEFAULT_PORTS.payment}`);
  });

  it('keeps the signing key of the auth service on a volume', () => {
    const auth = loadConfig(environmentOf('auth'));
    expect(services.auth.volumes).toContain('auth-keys:/app/data');
    expect(auth.jwt.privateKeyFile.startsWith('/app/data/')).toBe(true);
  });

  it('runs the gateway on 8080 after every service is healthy', () => {
    const gateway = services.gateway;
    expect(gateway.command).toEqual(['node', 'dist/gateway/main.js']);
    expect(gateway.ports).toEqual([`${DEFAULT_PORTS.gateway}:${DEFAULT_PORTS.gateway}`]);
    expect(Object.keys(gateway.depends_on ?? {}).sort()).toEqual([...SERVICE_NAMES].sort());
    expect(Object.values(gateway.depends_on ?? {}).every((d) => d.condition === 'service_healthy')).toBe(true);
    const config = loadConfig(environmentOf('gateway'));
    expect(config.ports.gateway).toBe(8080);
    expect(config.trustedDocuments).toBe('enforce');
    expect(config.apolloTelemetryDisabled).toBe(true);
  });

  it.each([...SERVICE_NAMES, 'gateway'])('has the %s process send its traces to Zipkin, reachable from this machine only', (name) => {
    const { tracing } = loadConfig(environmentOf(name));
    expect(tracing.exporter).toEqual({ kind: 'zipkin', endpoint: 'http://zipkin:9411/api/v2/spans' });
    expect(tracing).toMatchObject({ sampler: 'parentbased_traceidratio', ratio: 1 });
    expect(loadConfig(environmentOf(name, { ...operatorEnv, OTEL_TRACES_SAMPLER_ARG: '0.1' })).tracing.ratio).toBe(0.1);
    expect((services.zipkin as { image?: string }).image).toMatch(/^openzipkin\/zipkin:\d/);
    expect(services.zipkin.ports).toEqual(['127.0.0.1:9411:9411']);
  });

  it('keeps book covers in MinIO, reachable from this machine only', () => {
    expect(services.minio.ports?.every((port) => port.startsWith('127.0.0.1:'))).toBe(true);
    const config = loadConfig(environmentOf('book'));
    expect(config.covers.s3).toEqual({ bucket: 'covers', endpoint: 'http://minio:9000', region: 'us-east-1', publicUrl: 'http://localhost:9000/covers' });
  });

  it.each(['auth', 'order'])('has the %s service send its e-mail to Mailpit, whose UI is reachable from this machine only', (name) => {
    const { mail } = loadConfig(environmentOf(name));
    expect(mail.smtpUrl).toBe('smtp://mailpit:1025');
    expect(mail.localMailbox).toBeUndefined();
    expect((services.mailpit as { image?: string }).image).toMatch(/^axllent\/mailpit:v\d/);
    expect(services.mailpit.ports).toEqual(['127.0.0.1:8025:8025']);
  });

  it('sets no variable the configuration does not know', () => {
    const known = knownVariables();
    const unknown = Object.entries(services)
      .filter(([name]) => !THIRD_PARTY.includes(name))
      .flatMap(([name]) =>
        Object.keys(environmentOf(name))
          .filter((key) => !known.has(key) && !SDK_VARIABLES.includes(key))
          .map((key) => `${name}: ${key}`),
      );
    expect(unknown).toEqual([]);
  });

  it("publishes only the gateway's port; anything else an operator needs only on 127.0.0.1", () => {
    const published = Object.entries(services).flatMap(([name, service]) => (service.ports ?? []).map((port) => `${name} ${port}`));
    expect(published.filter((entry) => !entry.startsWith('gateway ') && !/^\S+ 127\.0\.0\.1:/.test(entry))).toEqual([]);
    expect(services.gateway.ports).toEqual(['8080:8080']);
  });

  it('takes every secret from the environment, with no default: the variables .env.example lists', () => {
    const interpolated = [...composeText.matchAll(/\$\{([A-Z0-9_]+)(:?[-?])?/g)].map((match) => ({ name: match[1], operator: match[2] ?? '' }));
    const secrets = interpolated.filter(({ name }) => /PASSWORD|SECRET|KEY/.test(name) && !name.startsWith('BOOTSTRAP_ADMIN') && !name.endsWith('_FILE'));
    expect(secrets.filter(({ operator }) => operator !== ':?')).toEqual([]);
    expect([...new Set(secrets.map(({ name }) => name))].sort()).toEqual([...exampleVariables].sort());
    expect(Object.keys(operatorEnv).sort()).toEqual([...exampleVariables].sort());
  });

  it.each(['payment', 'auth', 'gateway', 'stripe-simulator', 'mysql'])('refuses to start %s without the secrets, naming the one missing', (name) => {
    for (const missing of exampleVariables) {
      const env = { ...operatorEnv, [missing]: '' };
      const needs = JSON.stringify(services[name].environment ?? {}).includes(`\${${missing}:?`);
      if (needs) expect(() => environmentOf(name, env)).toThrow(`set ${missing}`);
    }
    expect(() => environmentOf(name, {})).toThrow(/^set [A-Z_]+ \(see \.env\.example\)$/);
  });

  it('passes the secrets through as given', () => {
    const payment = loadConfig(environmentOf('payment'));
    expect(payment.internalApiKey).toBe(operatorEnv.INTERNAL_API_KEY);
    expect(payment.stripe).toMatchObject({ secretKey: operatorEnv.STRIPE_SECRET_KEY, webhookSecret: operatorEnv.STRIPE_WEBHOOK_SECRET });
    expect(payment.dbUrl).toBe(`mysql://bookstore:${operatorEnv.MYSQL_PASSWORD}@mysql:3306`);
  });

  it("has the services believe forwarded headers only from the gateway's fixed address", () => {
    const address = services.gateway.networks?.default?.ipv4_address;
    const subnet = compose.networks?.default?.ipam?.config?.[0]?.subnet;
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(subnet?.split('.').slice(0, 3)).toEqual(address?.split('.').slice(0, 3));
    for (const name of [...SERVICE_NAMES, 'gateway']) {
      const config = loadConfig(environmentOf(name));
      expect([name, config.trustProxy.gatewayAddresses, config.trustProxy.frontProxies]).toEqual([name, [address], []]);
    }
  });

  it('creates a database for every service', () => {
    const init = fs.readFileSync(path.join(root, 'docker/mysql-init.sql'), 'utf8');
    for (const name of SERVICE_NAMES) expect(init).toContain(`bookstore_${name}`);
  });
});
