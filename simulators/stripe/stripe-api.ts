/**
 * The part of Stripe's REST API the payment service calls through the `stripe` SDK: form-encoded
 * requests, Bearer secret keys, Idempotency-Key replay, Stripe's JSON objects and error bodies.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, Router } from 'express';
import type { Logger } from '../../platform/logger';
import type { Ledger } from './ledger';
import { invalidParam, StripeApiError, type StripeErrorBody, stripeId } from './objects';
import type { StripeEvent, StripeEventType } from './webhooks';

export interface Faults {
  /** How many of the next API calls fail with `status`. */
  failNext: number;
  status: number;
  /** Latency added to every API call. */
  delayMs: number;
  /**
   * How many of the next refunds are refused for good, as Stripe refuses one the balance cannot
   * cover (402 `balance_insufficient`). The refusal is kept for its idempotency key, as Stripe
   * keeps it: a replay under that key is refused again without counting.
   */
  refuseRefunds: number;
  /** How many of the next refunds come back `pending`, until the control API settles them (`refund.updated`). */
  pendingRefunds: number;
  /**
   * How many of the next answers to a refund request (made or replayed) are lost: the refund is
   * done as asked, then the connection is dropped, as a timeout after Stripe acted looks to us.
   */
  dropRefundAnswers: number;
}

const refundRefused = () =>
  new StripeApiError(402, {
    type: 'invalid_request_error',
    code: 'balance_insufficient',
    message: 'You have insufficient funds in your Stripe account to process this refund (refusal injected through /simulator/faults).',
  });

type Publish = (type: StripeEventType, object: { id: string; object: string }, request: StripeEvent['request']) => Promise<unknown>;

export interface StripeApiDeps {
  ledger: Ledger;
  faults: Faults;
  publish: Publish;
  apiKeyPrefix: string;
  logger: Logger;
}

interface Answer {
  status: number;
  body: unknown;
  /** False for answers Stripe does not keep for an idempotency key (parameters that failed validation). */
  saved: boolean;
}

interface IdempotentRequest {
  savedAt: number;
  endpoint: string;
  fingerprint: string;
  answer: Promise<Answer>;
  /** False while the first request with the key still executes. */
  settled: boolean;
}

type Endpoint = (req: Request) => unknown;

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Stripe forgets keys after 24 hours; the SDK keys every POST, so a long-running demo must forget too. */
const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

function sendError(res: Response, status: number, body: StripeErrorBody): void {
  res.status(status).json({ error: body });
}

/** Parameters in a stable order, so that the same request always has the same fingerprint. */
function fingerprint(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(fingerprint).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${fingerprint((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

function errorTypeFor(status: number): StripeErrorBody['type'] {
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

export function stripeApiRouter(deps: StripeApiDeps): Router {
  const { ledger, faults, publish, logger } = deps;
  const router = Router();
  /** Keyed by secret key and Idempotency-Key: keys are scoped to the account that sent them. */
  const idempotency = new Map<string, IdempotentRequest>();

  const requestContext: RequestHandler = (req, res, next) => {
    res.setHeader('Request-Id', stripeId('req', 14));
    const version = req.get('Stripe-Version');
    if (version) res.setHeader('Stripe-Version', version);
    next();
  };

  const authenticate: RequestHandler = (req, res, next) => {
    const header = req.get('Authorization') ?? '';
    const [scheme, credentials = ''] = header.split(' ');
    // Stripe takes the key as a Bearer token or as the Basic user name (`curl -u sk_test_...:`).
    const key = /^bearer$/i.test(scheme) ? credentials : /^basic$/i.test(scheme) ? Buffer.from(credentials, 'base64').toString().split(':')[0] : '';
    res.locals.apiKey = key;
    if (key.startsWith(deps.apiKeyPrefix) && key.length > deps.apiKeyPrefix.length) {
      next();
      return;
    }
    res.setHeader('WWW-Authenticate', 'Bearer realm="Stripe"');
    const message = key
      ? `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`
      : "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').";
    sendError(res, 401, { type: 'invalid_request_error', message });
  };

  const injectFailure: RequestHandler = (_req, res, next) => {
    if (faults.failNext <= 0) {
      next();
      return;
    }
    faults.failNext -= 1;
    logger.info({ status: faults.status, remaining: faults.failNext }, 'failing a Stripe API call on request');
    sendError(res, faults.status, { type: errorTypeFor(faults.status), message: `Simulated failure (HTTP ${faults.status}) injected through /simulator/faults.` });
  };

  /** Entries are kept in insertion order, so the expired ones are at the front. */
  function forgetExpiredKeys(): void {
    const cutoff = Date.now() - IDEMPOTENCY_KEY_TTL_MS;
    for (const [scope, entry] of idempotency) {
      if (entry.savedAt >= cutoff) break;
      idempotency.delete(scope);
    }
  }

  async function execute(endpoint: Endpoint, req: Request): Promise<Answer> {
    try {
      if (faults.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.delayMs));
      return { status: 200, body: await endpoint(req), saved: true };
    } catch (error) {
      if (error instanceof StripeApiError) return { status: error.status, body: { error: error.body }, saved: !error.beforeExecution };
      logger.error({ err: error, path: req.path }, 'stripe simulator endpoint failed');
      return { status: 500, body: { error: { type: 'api_error', message: 'An unexpected error occurred in the Stripe simulator.' } }, saved: true };
    }
  }

  /**
   * Runs an endpoint under Stripe's idempotency rules: a POST with a known key replays the saved
   * answer (`Idempotent-Replayed: true`) when endpoint and parameters match, and is refused with
   * `idempotency_error` otherwise. Like Stripe, a request arriving while the first one with its key
   * still executes is refused (409 `idempotency_error`, nothing saved, safe to retry): the SDK retries
   * a 409 when `maxNetworkRetries` allows, with the same key, and then gets the replay.
   */
  const handle =
    (endpoint: Endpoint): RequestHandler =>
    async (req, res) => {
      const key = req.get('Idempotency-Key');
      if (req.method !== 'POST' || key === undefined) {
        const answer = await execute(endpoint, req);
        res.status(answer.status).json(answer.body);
        return;
      }
      if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
        throw invalidParam(`Idempotency-Key is too long: at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`, 'parameter_invalid_string', 'Idempotency-Key');
      }
      res.setHeader('Idempotency-Key', key);
      const scope = `${String(res.locals.apiKey)}\n${key}`;
      const request = { endpoint: `${req.method} ${req.baseUrl}${req.path}`, fingerprint: fingerprint(req.body ?? {}) };
      const earlier = idempotency.get(scope);
      if (earlier) {
        if (earlier.endpoint !== request.endpoint) {
          throw new StripeApiError(400, {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${earlier.endpoint}' vs '${request.endpoint}'). Try using a key other than '${key}' if you meant to execute a different request.`,
          });
        }
        if (earlier.fingerprint !== request.fingerprint) {
          throw new StripeApiError(400, {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          });
        }
        if (!earlier.settled) {
          throw new StripeApiError(409, {
            type: 'idempotency_error',
            message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
          });
        }
        const answer = await earlier.answer;
        if (answer.saved) res.setHeader('Idempotent-Replayed', 'true');
        res.status(answer.status).json(answer.body);
        return;
      }
      forgetExpiredKeys();
      const entry: IdempotentRequest = { ...request, savedAt: Date.now(), answer: execute(endpoint, req), settled: false };
      idempotency.set(scope, entry);
      const settled = await entry.answer;
      entry.settled = true;
      if (!settled.saved) idempotency.delete(scope);
      res.status(settled.status).json(settled.body);
    };

  const params = (req: Request): Record<string, unknown> => (req.body ?? {}) as Record<string, unknown>;
  const apiRequest = (req: Request) => ({ id: String(req.res?.getHeader('Request-Id')), idempotency_key: req.get('Idempotency-Key') ?? null });
  /** Events an API call causes are sent in the background: the API answers without waiting for the receiver. */
  const publishInBackground = (type: StripeEventType, object: { id: string; object: string }, req: Request) => {
    publish(type, object, apiRequest(req)).catch((error: unknown) => logger.error({ err: error, type }, 'publishing an event failed'));
  };

  router.use(requestContext, authenticate, injectFailure, express.urlencoded({ extended: true, limit: '1mb' }));

  router.post(
    '/payment_intents',
    handle((req) => ledger.createPaymentIntent(params(req))),
  );
  router.get(
    '/payment_intents/:id',
    handle((req) => ledger.retrievePaymentIntent(String(req.params.id))),
  );
  router.post(
    '/payment_intents/:id/cancel',
    handle((req) => {
      const intent = ledger.cancelPaymentIntent(String(req.params.id), params(req));
      publishInBackground('payment_intent.canceled', intent, req);
      return intent;
    }),
  );
  /** The answer never arrives: whatever the endpoint did stands, and the connection is dropped instead. */
  const dropRefundAnswer: RequestHandler = (_req, res, next) => {
    if (faults.dropRefundAnswers > 0) {
      faults.dropRefundAnswers -= 1;
      logger.info({ remaining: faults.dropRefundAnswers }, 'dropping the answer to a refund request on request');
      res.json = () => {
        res.socket?.destroy();
        return res;
      };
    }
    next();
  };

  router.post(
    '/refunds',
    dropRefundAnswer,
    handle((req) => {
      if (faults.refuseRefunds > 0) {
        faults.refuseRefunds -= 1;
        throw refundRefused();
      }
      const pending = faults.pendingRefunds > 0;
      if (pending) faults.pendingRefunds -= 1;
      const { refund, charge } = ledger.refund(params(req), pending);
      // As Stripe: the refund's own event, then the charge's, for a partial refund too.
      publishInBackground('refund.created', refund, req);
      publishInBackground('charge.refunded', charge, req);
      return refund;
    }),
  );

  router.use((req, res) => {
    sendError(res, 404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${req.method}: ${req.baseUrl}${req.path}). The Stripe simulator serves only the PaymentIntent and Refund calls the payment service makes.`,
    });
  });
  router.use(stripeErrorHandler(logger));
  return router;
}

/** Renders `StripeApiError`s and body-parser failures in Stripe's error shape. */
export function stripeErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof StripeApiError) {
      sendError(res, error.status, error.body);
      return;
    }
    const parserStatus = (error as { status?: number; type?: string }).status;
    if (parserStatus !== undefined && parserStatus >= 400 && parserStatus < 500) {
      sendError(res, parserStatus, { type: 'invalid_request_error', message: `The request body could not be parsed: ${(error as Error).message}` });
      return;
    }
    logger.error({ err: error, path: req.path }, 'stripe simulator failed');
    sendError(res, 500, { type: 'api_error', message: 'An unexpected error occurred in the Stripe simulator.' });
  };
}
