/** The outbound webhooks' settings (CONTRACT §11): where deliveries may go, how long they wait and how often they retry. */
import type { EnvReader } from './env';

export interface WebhooksConfig {
  webhooks: {
    /** `WEBHOOKS_ALLOW_PRIVATE_TARGETS` (default false): allow loopback, link-local and private addresses as targets (tests, a private network). */
    allowPrivateTargets: boolean;
    /** `WEBHOOKS_TIMEOUT_MS` (default 10 s): how long a receiver has to answer one attempt. */
    timeoutMs: number;
    /** `WEBHOOKS_RETRY_BASE_MS` (default 60 s): the wait before the first retry; each next retry waits twice as long. */
    retryBaseMs: number;
    /** `WEBHOOKS_POLL_MS` (default 1 s): how often the dispatcher looks for deliveries that are due. */
    pollMs: number;
    /** `WEBHOOKS_DISABLE_AFTER_MS` (default 24 h): an endpoint whose every attempt failed for this long is disabled. */
    disableAfterMs: number;
  };
}

export function readWebhooks(env: EnvReader): WebhooksConfig {
  return {
    webhooks: {
      allowPrivateTargets: env.bool('WEBHOOKS_ALLOW_PRIVATE_TARGETS', false),
      timeoutMs: env.int('WEBHOOKS_TIMEOUT_MS', 10_000, 1),
      retryBaseMs: env.int('WEBHOOKS_RETRY_BASE_MS', 60_000, 1),
      pollMs: env.int('WEBHOOKS_POLL_MS', 1000, 10),
      disableAfterMs: env.int('WEBHOOKS_DISABLE_AFTER_MS', 24 * 3600_000, 0),
    },
  };
}
