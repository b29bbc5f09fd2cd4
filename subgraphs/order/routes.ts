/** REST routes of the order service (CONTRACT §6): parse, authorize, call the service, answer. */
import { Router } from 'express';
import { methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, type TokenVerifier } from '../../platform/auth';
import { parseLimitOffset, parseOneOf, parseUuid } from '../../platform/validation';
import { ORDER_STATUSES, type OrderStatus } from './entities';
import { parseTrackingNumber } from './order-mail';
import type { OrderService } from './service';

function parseStatus(value: unknown, required: boolean): OrderStatus | undefined {
  if (value === undefined && !required) return undefined;
  return parseOneOf(value, ORDER_STATUSES, 'status');
}

export function orderRoutes(service: OrderService, verifier: TokenVerifier): Router {
  const router = Router();
  router.use(authenticate(verifier));

  router
    .route('/')
    .get(async (req, res) => {
      const page = parseLimitOffset(req.query, { limit: 200, maxLimit: 200 });
      const { orders, total } = await service.listAll(principalOf(req), {
        limit: req.query.limit === undefined ? undefined : page.limit,
        offset: page.offset,
        status: parseStatus(req.query.status, false),
      });
      res.setHeader('X-Total-Count', String(total));
      res.json(orders);
    })
    .all(methodNotAllowed);

  router
    .route('/me')
    .get(async (req, res) => {
      res.json(await service.listMine(principalOf(req)));
    })
    .all(methodNotAllowed);

  router
    .route('/userId')
    .get(async (req, res) => {
      res.json(await service.listOfUser(principalOf(req), parseUuid(req.query.id, 'id')));
    })
    .all(methodNotAllowed);

  router
    .route('/payment/:paymentId')
    .get(async (req, res) => {
      res.json(await service.getOrderForPayment(principalOf(req), parseUuid(req.params.paymentId, 'paymentId')));
    })
    .all(methodNotAllowed);

  router
    .route('/:id/status')
    .put(async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      const status = parseStatus(req.query.status, true) as OrderStatus;
      res.json(await service.updateStatus(principalOf(req), id, status, parseTrackingNumber(req.query.trackingNumber, status)));
    })
    .all(methodNotAllowed);

  router
    .route('/:id/cancel')
    .post(async (req, res) => {
      await service.cancel(principalOf(req), parseUuid(req.params.id, 'id'));
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get(async (req, res) => {
      res.json(await service.getOrder(principalOf(req), parseUuid(req.params.id, 'id')));
    })
    .all(methodNotAllowed);

  return router;
}
