/** REST routes of the analytics service (interface §4.3): all GET, all ADMIN; and the schema registry's (CONTRACT §13). */
import { Router, type Request } from 'express';
import { methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, requireRole, type TokenVerifier } from '../../platform/auth';
import { parseOptionalDate } from '../../platform/validation';
import { ADMIN_ONLY, resolveRange, type AnalyticsService } from './service';

function range(req: Request) {
  return resolveRange(parseOptionalDate(req.query.from, 'from'), parseOptionalDate(req.query.to, 'to'));
}

/** The schema registry's routers (registry/routes.ts): its internal routes answer to the internal key, not to a token. */
export interface RegistryRouters {
  adminRoutes: Router;
  internalRoutes: Router;
}

export function analyticsRoutes(service: AnalyticsService, verifier: TokenVerifier, registry: RegistryRouters): Router {
  const router = Router();
  router.use('/internal', registry.internalRoutes);
  router.use(authenticate(verifier), requireRole('ADMIN', ADMIN_ONLY));
  router.use('/schema', registry.adminRoutes);

  router
    .route('/dashboard')
    .get(async (req, res) => void res.json(await service.dashboard(principalOf(req))))
    .all(methodNotAllowed);
  router
    .route('/revenue')
    .get(async (req, res) => void res.json(await service.revenue(principalOf(req), range(req))))
    .all(methodNotAllowed);
  router
    .route('/revenue/daily')
    .get(async (req, res) => void res.json(await service.revenueDaily(principalOf(req), range(req))))
    .all(methodNotAllowed);
  router
    .route('/revenue/monthly')
    .get(async (req, res) => void res.json(await service.revenueMonthly(principalOf(req), range(req))))
    .all(methodNotAllowed);
  router
    .route('/orders')
    .get(async (req, res) => void res.json(await service.orders(principalOf(req), range(req))))
    .all(methodNotAllowed);
  router
    .route('/books')
    .get(async (req, res) => void res.json(await service.books(principalOf(req))))
    .all(methodNotAllowed);
  router
    .route('/payments')
    .get(async (req, res) => void res.json(await service.payments(principalOf(req))))
    .all(methodNotAllowed);

  return router;
}
