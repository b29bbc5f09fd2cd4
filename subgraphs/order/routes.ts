/** REST routes of the order service (CONTRACT §6): parse, authorize, call the service, answer. */
import { Router } from 'express';
import { methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, type TokenVerifier } from '../../rest-compat/auth';
import { parseLimitOffset, parseUuid, validationError } from '../../rest-compat/validation';
import { ORDER_STATUSES, type OrderStatus } from './entities';
import type { OrderService } from './service';

function parseStatus(value: unknown, required: boolean): OrderStatus | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !(ORDER_STATUSES as readonly string[]).includes(value)) {
    throw validationError(`status: must be one of ${ORDER_STATUSES.join(', ')}`);
  }
  return value as OrderStatus;
}

export function orderRoutes(service: OrderService, verifier: TokenVerifier): Router {
  const router = Router();
  router.use(authenticate(verifier));

  router
    .route('/')
    .get(async (req, res) => {
      const page = parseLimitOffset(req.query, { limit: 50, maxLimit: 200 });
      res.json(await service.listAll(principalOf(req), { ...page, status: parseStatus(req.query.status, false) }));
    })
    .all(methodNotAllowed);

  router
    .route('/me')
    .get(async (req, res) => {
      res.json(await service.listMine(principalOf(req)));
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
      res.json(await service.updateStatus(principalOf(req), id, parseStatus(req.query.status, true) as OrderStatus));
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
