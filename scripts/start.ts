/**
 * `npm start`: the embedded default. One process runs every service on its documented port, with
 * SQLite files under ./data and the in-process event bus (or MariaDB/Kafka when DB_URL and
 * KAFKA_BROKERS are set), then the gateway in front of them, creates the bootstrap admin and prints
 * where everything is. Without SMTP_URL, a local mailbox (an SMTP server in this process) receives
 * every e-mail and keeps it under <DATA_DIR>/mail. With `TRACING=on` (or the OpenTelemetry variables, platform/config/telemetry.ts)
 * every service's spans go to a trace viewer (`npm run zipkin start`).
 */
// First: registers the tracing instrumentations before the modules they patch are loaded.
import '../platform/telemetry/register';
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { createGateway, type GatewayRuntime, type GraphqlHalf } from '../gateway';
import { ADMIN_DIST_DIR } from '../gateway/admin-static';
import { graphqlHalf } from '../gateway/graphql';
import type { ServiceName } from '../platform/config';
import { LocalMailbox } from '../platform/mail/local-mailbox';
import { processDeps, stopOnSignals } from '../platform/run';
import type { BookstoreService } from '../rest-compat/service';
import { SERVICE_FACTORIES } from '../subgraphs';
import { createStripeSimulator, type StripeSimulator } from '../simulators/stripe/simulator';

const adminBuilt = () => fs.existsSync(path.join(ADMIN_DIST_DIR, 'index.html'));

interface EmbeddedOptions {
  /** The gateway's federated GraphQL half (gateway/graphql.ts); without it the gateway serves REST only. */
  graphql?: GraphqlHalf;
}

async function main(options: EmbeddedOptions = {}): Promise<void> {
  const began = performance.now();
  const deps = processDeps({ embedded: true });
  const { config, logger } = deps;

  const started: BookstoreService[] = [];
  let simulator: StripeSimulator | undefined;
  let mailbox: LocalMailbox | undefined;
  let gateway: GatewayRuntime | undefined;
  const stopAll = async () => {
    await gateway?.stop();
    for (const service of [...started].reverse()) await service.stop();
    await simulator?.stop();
    await mailbox?.stop();
    await deps.bus.close();
  };
  const usesSimulator = config.stripe.apiUrl === `http://127.0.0.1:${config.stripe.simulatorPort}`;
  stopOnSignals(logger, stopAll);

  try {
    if (config.mail.localMailbox) {
      mailbox = new LocalMailbox(config.mail.localMailbox.dir);
      await mailbox.start(config.mail.localMailbox.port, '127.0.0.1');
    }
    if (usesSimulator) {
      simulator = createStripeSimulator({
        webhookUrl: () => `${config.urls.payment}/api/payments/webhook`,
        webhookSecret: config.stripe.webhookSecret ?? '',
        logger,
      });
      await simulator.start(config.stripe.simulatorPort, '127.0.0.1');
    }
    for (const build of Object.values(SERVICE_FACTORIES)) {
      const service = await build(deps);
      await service.start(config.ports[service.name as keyof typeof config.ports], config.bindHost);
      started.push(service);
    }
    // Last, so its health check finds every service up; it checks exactly the services started here.
    gateway = await createGateway({
      config,
      logger,
      mountGraphql: options.graphql?.(deps),
      healthChecks: started.map((service) => service.name as ServiceName),
    });
    await gateway.start(config.ports.gateway, config.bindHost);
  } catch (error) {
    logger.fatal({ err: error }, 'the embedded system failed to start');
    await stopAll().catch(() => undefined);
    process.exit(1);
  }

  const host = config.bindHost === '0.0.0.0' ? '127.0.0.1' : config.bindHost;
  const lines = [
    '',
    `Bookstore backend is up (${Math.round(performance.now() - began)} ms)`,
    `  data:       ${config.dbUrl ? `MySQL ${config.dbUrl.replace(/\/\/[^@]*@/, '//')}` : config.dataDir}`,
    `  events:     ${deps.bus.kind === 'kafka' ? `Kafka ${config.kafkaBrokers?.join(',')}` : 'in-process bus'}`,
    ...started.map((service) => `  ${`${service.name}:`.padEnd(11)} http://${host}:${config.ports[service.name as keyof typeof config.ports]}`),
    `  gateway:    http://${host}:${config.ports.gateway}`,
    simulator
      ? `  stripe:     simulator at http://127.0.0.1:${config.stripe.simulatorPort} (POST /simulator/payment_intents/<id>/confirm pays)`
      : `  stripe:     ${config.stripe.apiUrl ?? 'api.stripe.com'}`,
    `  e-mail:     ${config.mail.localMailbox ? `local mailbox at smtp://127.0.0.1:${config.mail.localMailbox.port}, kept under ${config.mail.localMailbox.dir}` : config.mail.smtpUrl?.replace(/\/\/[^@]*@/, '//')}`,
    `  admin:      http://${host}:${config.ports.gateway}/admin (${config.bootstrapAdmin ? `${config.bootstrapAdmin.email} / ${config.bootstrapAdmin.password}` : 'no admin account configured'})${adminBuilt() ? '' : ' not built: run npm run build'}`,
    'Press Ctrl-C to stop.',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

// `main({ graphql })` serves the federated API at the gateway's /graphql as well.
void main({ graphql: graphqlHalf });
