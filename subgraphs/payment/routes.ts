/** REST routes of the payment service (interface §4.4): parse, authorize, call the service, answer. */
import express, { Router, type Express } from 'express';
import { BODY_LIMIT, methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, type TokenVerifier } from '../../platform/auth';
import { parseOneOf, parseUuid, validateBody } from '../../platform/validation';
import { CreateCheckoutRequest, CreateRefundRequest } from './dto';
import { REFUND_STATUSES } from './entities';
import type { Refunds } from './refunds';
import type { PaymentService } from './service';
import type { WebhookHandler } from './webhook';
import type { PaymentWatch } from './live';

/** The webhook needs the exact bytes Stripe signed, so it is mounted before JSON parsing. */
export function mountWebhook(app: Express, webhooks: WebhookHandler): void {
  app
    .route('/api/payments/webhook')
    .post(express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res) => {
      const signature = req.headers['stripe-signature'] ?? req.headers['provider-signature'];
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      await webhooks.receive(rawBody, typeof signature === 'string' ? signature : undefined);
      res.type('text/plain').send('Webhook received');
    })
    .all(methodNotAllowed);
}

export function paymentRoutes(service: PaymentService, refunds: Refunds, verifier: TokenVerifier, watch: PaymentWatch): Router {
  const router = Router();
  router.use(authenticate(verifier));

  router
    .route('/checkout')
    .post(async (req, res) => {
      const request = await validateBody(CreateCheckoutRequest, req.body);
      res.json(await service.checkout(principalOf(req), request));
    })
    .all(methodNotAllowed);

  router
    .route('/')
    .get(async (req, res) => {
      res.json(await service.listMine(principalOf(req)));
    })
    .all(methodNotAllowed);

  // Before `/:paymentId`, which would take `refunds` for an id.
  router
    .route('/refunds')
    .get(async (req, res) => {
      res.json(await refunds.list(principalOf(req), parseOneOf(req.query.status ?? 'FAILED', REFUND_STATUSES, 'status')));
    })
    .all(methodNotAllowed);

  router
    .route('/refunds/:refundId/retry')
    .post(async (req, res) => {
      res.json(await refunds.retry(principalOf(req), parseUuid(req.params.refundId, 'refundId')));
    })
    .all(methodNotAllowed);

  router
    .route('/:paymentId/refunds')
    .post(async (req, res) => {
      const id = parseUuid(req.params.paymentId, 'paymentId');
      const request = await validateBody(CreateRefundRequest, req.body);
      res.status(201).json(await refunds.create(principalOf(req), id, request));
    })
    .get(async (req, res) => {
      res.json(await refunds.listOf(principalOf(req), parseUuid(req.params.paymentId, 'paymentId')));
    })
    .all(methodNotAllowed);

  router
    .route('/:paymentId/sync-order')
    .post(async (req, res) => {
      const id = parseUuid(req.params.paymentId, 'paymentId');
      await service.syncOrder(principalOf(req), id);
      res.type('text/plain').send(`payment-success re-published for paymentId=${id}`);
    })
    .all(methodNotAllowed);

  router
    .route('/:paymentId/events')
    .get(async (req, res) => {
      const principal = principalOf(req);
      const id = parseUuid(req.params.paymentId, 'paymentId');
      await watch.stream(req, res, principal, id, () => service.getPayment(principal, id));
    })
    .all(methodNotAllowed);

  router
    .route('/:paymentId')
    .get(async (req, res) => {
      res.json(await service.getPayment(principalOf(req), parseUuid(req.params.paymentId, 'paymentId')));
    })
    .all(methodNotAllowed);

  return router;
}
