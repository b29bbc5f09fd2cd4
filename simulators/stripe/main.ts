/**
 * Starts the Stripe simulator alone on STRIPE_SIMULATOR_PORT (default 8099), delivering webhooks to
 * the payment service at PAYMENT_URL, signed with STRIPE_WEBHOOK_SECRET (docker-compose uses it).
 */
import { processDeps, stopOnSignals } from '../../platform/run';
import { createStripeSimulator } from './simulator';

async function main(): Promise<void> {
  const { config, logger } = processDeps({ service: 'stripe-simulator' });
  if (!config.stripe.webhookSecret) {
    process.stderr.write('Configuration error: STRIPE_WEBHOOK_SECRET must be set (the secret the simulator signs webhooks with)\n');
    process.exit(1);
  }
  const simulator = createStripeSimulator({
    webhookUrl: () => `${config.urls.payment}/api/payments/webhook`,
    webhookSecret: config.stripe.webhookSecret,
    logger,
  });
  const port = await simulator.start(config.stripe.simulatorPort, config.bindHost);
  logger.info({ port }, 'stripe simulator listening');
  stopOnSignals(logger, () => simulator.stop());
}

void main();
