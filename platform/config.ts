/**
 * The one place that reads the environment. `loadConfig()` is called once per process (by a
 * `main.ts` or the embedded starter) and its result is handed to every service as a dependency.
 * Each section of the settings is read, and checked, by a file of platform/config/.
 */
import { readAuth, type AuthConfig } from './config/auth';
import { readCatalogue, type CatalogueConfig } from './config/catalogue';
import { readDatabase, type DatabaseConfig } from './config/database';
import { envReader, type Env, type LoadOptions } from './config/env';
import { apolloTelemetryDisabled, readGateway, type GatewayConfig } from './config/gateway';
import { readGraphql, type GraphqlConfig } from './config/graphql';
import { readKafka, type KafkaConfig } from './config/kafka';
import { readMail, type MailConfig } from './config/mail';
import { readNetwork, type NetworkConfig } from './config/network';
import { readSchemaCheck, readSchemaPublish, readUsage, type SchemaCheckSettings, type SchemaPublishSettings, type UsageConfig } from './config/registry';
import { readStripe, type StripeConfig } from './config/stripe';
import { readTelemetry, type TelemetryConfig } from './config/telemetry';
import { readWebhooks, type WebhooksConfig } from './config/webhooks';

export { EMBEDDED_ADMIN } from './config/auth';
export { ConfigError, type LoadOptions } from './config/env';
export { DEFAULT_PORTS, SERVICE_NAMES, type ServiceName } from './config/network';
export type { TracingConfig } from './config/telemetry';
export { TRUSTED_DOCUMENT_MODES, type TrustedDocumentMode } from './config/graphql';
export type { RegistryAccess, SchemaCheckBase, SchemaCheckSettings, SchemaPublishSettings } from './config/registry';

export interface Config
  extends
    DatabaseConfig,
    NetworkConfig,
    KafkaConfig,
    GatewayConfig,
    GraphqlConfig,
    CatalogueConfig,
    AuthConfig,
    StripeConfig,
    TelemetryConfig,
    MailConfig,
    WebhooksConfig,
    UsageConfig {
  logLevel: string;
  /**
   * `STARTUP_TIMEOUT_MS` (default 60 s): how long a service keeps retrying a start that failed for a
   * passing reason (broker or database still coming up) before it gives up and exits.
   */
  startupTimeoutMs: number;
}

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  const reader = envReader(env, options);
  const database = readDatabase(reader);
  const network = readNetwork(reader);
  const config: Config = {
    logLevel: reader.read('LOG_LEVEL') ?? (reader.embedded ? 'warn' : 'info'),
    startupTimeoutMs: reader.int('STARTUP_TIMEOUT_MS', 60_000, 0),
    ...database,
    ...network,
    ...readAuth(reader, database.dataDir),
    ...readKafka(reader),
    ...readGateway(reader),
    ...readGraphql(reader),
    ...readCatalogue(reader, network.ports.gateway),
    ...readStripe(reader),
    ...readTelemetry(reader),
    ...readMail(reader, database.dataDir, network.ports.gateway),
    ...readWebhooks(reader),
    ...readUsage(reader),
  };
  applyApolloTelemetry(config.apolloTelemetryDisabled);
  return config;
}

/**
 * @apollo/gateway reads `APOLLO_TELEMETRY_DISABLED` from process.env itself when a gateway is
 * constructed (and then reports usage to Apollo unless it is 1 or true), so the decision is written
 * back there: off unless asked for.
 */
function applyApolloTelemetry(disabled: boolean): boolean {
  if (disabled) process.env.APOLLO_TELEMETRY_DISABLED = '1';
  return disabled;
}

/**
 * `npm run schema:check` reads only this (it needs no service configuration): `SCHEMA_BASE_REF`,
 * the git ref whose supergraph is the base of the breaking-change check (e.g. origin/main in a pull
 * request's pipeline); unset, the check compares with the previous committed version of the file.
 * The usage it judges changes by, and how, are the registry settings (platform/config/registry.ts).
 * It loads a gateway too, so the telemetry switch applies.
 */
export function loadSchemaCheckConfig(env: Env = process.env): { baseRef: string | undefined; apolloTelemetryDisabled: boolean } & SchemaCheckSettings {
  const reader = envReader(env, {});
  return {
    baseRef: reader.read('SCHEMA_BASE_REF'),
    apolloTelemetryDisabled: applyApolloTelemetry(apolloTelemetryDisabled(reader.read('APOLLO_TELEMETRY_DISABLED'))),
    ...readSchemaCheck(reader),
  };
}

/** `npm run schema:publish`: where the registry is, and who publishes which commit. */
export function loadSchemaPublishConfig(env: Env = process.env): SchemaPublishSettings {
  return readSchemaPublish(envReader(env, {}));
}

/**
 * What a process reads before anything else is loaded (platform/telemetry/register.ts): the
 * tracing settings alone, so instrumentation is in place before the modules it patches are required.
 */
export function loadTelemetryConfig(env: Env = process.env): TelemetryConfig {
  return readTelemetry(envReader(env, {}));
}
