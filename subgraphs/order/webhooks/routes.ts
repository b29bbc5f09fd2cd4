/** REST routes of the outbound webhooks (CONTRACT §11), under /api/webhooks: parse, authorize, call the service, answer. */
import { Router } from 'express';
import { methodNotAllowed } from '../../../rest-compat/app';
import { authenticate, principalOf, type TokenVerifier } from '../../../platform/auth';
import { parseLimitOffset, parseOneOf, parseUuid, validateBody } from '../../../platform/validation';
import { CreateEndpointRequest, RotateSecretRequest, UpdateEndpointRequest } from './dto';
import { DELIVERY_STATUSES } from './entities';
import type { WebhookService } from './service';

export function webhookRoutes(service: WebhookService, verifier: TokenVerifier): Router {
  const router = Router();
  router.use(authenticate(verifier));

  router
    .route('/endpoints')
    .get(async (req, res) => {
      res.json(await service.list(principalOf(req)));
    })
    .post(async (req, res) => {
      const principal = principalOf(req);
      res.status(201).json(await service.create(principal, await validateBody(CreateEndpointRequest, req.body)));
    })
    .all(methodNotAllowed);

  router
    .route('/endpoints/:id')
    .get(async (req, res) => {
      res.json(await service.get(principalOf(req), parseUuid(req.params.id, 'id')));
    })
    .put(async (req, res) => {
      const principal = principalOf(req);
      const id = parseUuid(req.params.id, 'id');
      res.json(await service.update(principal, id, await validateBody(UpdateEndpointRequest, req.body)));
    })
    .delete(async (req, res) => {
      await service.remove(principalOf(req), parseUuid(req.params.id, 'id'));
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/endpoints/:id/rotate-secret')
    .post(async (req, res) => {
      const principal = principalOf(req);
      const id = parseUuid(req.params.id, 'id');
      res.json(await service.rotateSecret(principal, id, await validateBody(RotateSecretRequest, req.body ?? {})));
    })
    .all(methodNotAllowed);

  router
    .route('/endpoints/:id/test')
    .post(async (req, res) => {
      res.json(await service.sendTest(principalOf(req), parseUuid(req.params.id, 'id')));
    })
    .all(methodNotAllowed);

  router
    .route('/endpoints/:id/deliveries')
    .get(async (req, res) => {
      const principal = principalOf(req);
      const page = parseLimitOffset(req.query, { limit: 50, maxLimit: 200 });
      const status = req.query.status === undefined ? undefined : parseOneOf(req.query.status, DELIVERY_STATUSES, 'status');
      const { deliveries, total } = await service.listDeliveries(principal, parseUuid(req.params.id, 'id'), { ...page, status });
      res.setHeader('X-Total-Count', String(total));
      res.json(deliveries);
    })
    .all(methodNotAllowed);

  router
    .route('/deliveries/:id/resend')
    .post(async (req, res) => {
      res.json(await service.resend(principalOf(req), parseUuid(req.params.id, 'id')));
    })
    .all(methodNotAllowed);

  return router;
}
