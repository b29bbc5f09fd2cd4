/**
 * The payment service's Stripe: a real account when its key is given, else (in the embedded
 * default) the built-in simulator with its well-known key and webhook secret.
 */
import { ConfigError, type EnvReader } from './env';

export interface StripeConfig {
  stripe: {
    /** Unset: the payment service cannot start (the embedded default uses the simulator's key). */
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    /** Where the SDK sends API calls; unset means api.stripe.com. */
    apiUrl: string | undefined;
    currency: string;
    /** The built-in simulator's port, when this process runs it. */
    simulatorPort: number;
  };
}

export function readStripe(env: EnvReader): StripeConfig {
  const simulatorPort = env.int('STRIPE_SIMULATOR_PORT', 8099);
  const secretKey = env.read('STRIPE_SECRET_KEY');
  // The embedded default uses the simulator unless a real key is given without a simulator URL.
  const useSimulator = env.embedded && secretKey === undefined;
  const apiUrl = env.read('STRIPE_API_URL') ?? (useSimulator ? `http://127.0.0.1:${simulatorPort}` : undefined);
  if (apiUrl !== undefined && !/^https?:\/\/[^/]+\/?$/.test(apiUrl)) {
    throw new ConfigError(`STRIPE_API_URL must be a scheme, host and port such as http://127.0.0.1:8099, got "${apiUrl}"`);
  }
  // The simulator's well-known webhook secret only beside the simulator itself: with a real key,
  // anyone who read it could sign `payment_intent.succeeded` (CONTRACT §1.2).
  const webhookSecret = env.read('STRIPE_WEBHOOK_SECRET') ?? (useSimulator ? 'whsec_bookstore_simulator_secret' : undefined);
  if (secretKey !== undefined && webhookSecret === undefined) {
    throw new ConfigError("STRIPE_WEBHOOK_SECRET must be set when STRIPE_SECRET_KEY is (the secret that signs the provider's webhooks)");
  }
  const currency = (env.read('PAYMENT_CURRENCY') ?? 'usd').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ConfigError(`PAYMENT_CURRENCY must be a three-letter ISO currency code, got "${currency}"`);
  return { stripe: { secretKey: secretKey ?? (useSimulator ? 'sk_test_bookstore_simulator' : undefined), webhookSecret, apiUrl, currency, simulatorPort } };
}
