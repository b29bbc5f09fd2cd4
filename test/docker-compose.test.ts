/**
 * docker-compose.yml cannot run on the machines CI uses (no Docker engine), so it is checked by
 * reading it: every service is there with its command, port, health check and dependencies, and
 * each service's environment is one the code's configuration accepts and resolves as intended.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_PORTS, SERVICE_NAMES, loadConfig } from '../platform/config';

interface ComposeService {
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
}

const root = path.join(__dirname, '..');
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;

/** `${VAR:-default}` and `${VAR-default}` as compose resolves them with nothing set. */
function withDefaults(value: string | number): string {
  return String(value).replace(/\$\{[A-Z_]+:?-([^}]*)\}/g, '$1');
}

function environmentOf(name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(services[name].environment ?? {}).map(([key, value]) => [key, withDefaults(value)]));
}

/** Every variable platform/config.ts reads by name, plus the per-service port and URL ones. */
function knownVariables(): Set<string> {
  const source = fs.readFileSync(path.join(root, 'platform/config.ts'), 'utf8');
  const named = [...source.matchAll(/\b(?:read|int)\('([A-Z_]+)'/g)].map((match) => match[1]);
  const perService = [...SERVICE_NAMES, 'gateway'].flatMap((name) => [`${name.toUpperCase()}_PORT`, `${name.toUpperCase()}_URL`]);
  return new Set([...named, ...perService]);
}

describe('docker-compose.yml', () => {
  it('runs MySQL 8.4 and Kafka 3.9 with health checks', () => {
    expect((services.mysql as { image?: string }).image).toBe('mysql:8.4');
    expect((services.kafka as { image?: string }).image).toMatch(/^apache\/kafka:3\.9\./);
    expect(services.mysql.healthcheck).toBeDefined();
    expect(services.kafka.healthcheck).toBeDefined();
  });

  it.each(SERVICE_NAMES)('runs the %s service from the image on its documented port, after MySQL and Kafka are healthy', (name) => {
    const service = services[name];
    expect(service.command).toEqual(['node', `dist/subgraphs/${name}/main.js`]);
    expect(fs.existsSync(path.join(root, `subgraphs/${name}/main.ts`))).toBe(true);
    expect(service.ports).toEqual([`${DEFAULT_PORTS[name]}:${DEFAULT_PORTS[name]}`]);
    expect(service.depends_on).toEqual({ mysql: { condition: 'service_healthy' }, kafka: { condition: 'service_healthy' } });
    expect(service.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${DEFAULT_PORTS[name]}/actuator/health`);
  });

  it.each(SERVICE_NAMES)('gives the %s service an environment the configuration accepts: MySQL, Kafka, its port, the others\' addresses', (name) => {
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
    expect(services['stripe-simulator'].command).toEqual(['node', 'dist/subgraphs/payment/simulator/main.js']);
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
    expect(config.apolloTelemetryDisabled).toBe(true);
  });

  it('sets no variable the configuration does not know', () => {
    const known = knownVariables();
    const unknown = Object.entries(services)
      .filter(([name]) => name !== 'mysql' && name !== 'kafka')
      .flatMap(([name]) => Object.keys(environmentOf(name)).filter((key) => !known.has(key)).map((key) => `${name}: ${key}`));
    expect(unknown).toEqual([]);
  });

  it('creates a database for every service', () => {
    const init = fs.readFileSync(path.join(root, 'docker/mysql-init.sql'), 'utf8');
    for (const name of SERVICE_NAMES) expect(init).toContain(`bookstore_${name}`);
  });
});
