/**
 * REST routes of the schema registry (CONTRACT §13), thin: the admin's reads under
 * /analytics/schema (behind the analytics router's ADMIN check), and the internal routes under
 * /analytics/internal (the internal key; the gateway does not route them) that the gateway,
 * `npm run schema:publish` and `npm run schema:check` call.
 */
import { Router, type Request } from 'express';
import { methodNotAllowed } from '../../../rest-compat/app';
import { principalOf, requireInternalKey } from '../../../platform/auth';
import { parseLimitOffset, parseUuid, validateBody, validationError } from '../../../platform/validation';
import { SchemaVersionRequest, UsageReportRequest } from './dto';
import { fieldsPage, MAX_WINDOW_DAYS, type RegistryService } from './service';

export const DEFAULT_WINDOW_DAYS = 7;

/** `days`: an integer from 1 to MAX_WINDOW_DAYS, default 7 (the REST query string and GraphQL alike). */
export function parseDays(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_WINDOW_DAYS;
  const days = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(days) || days < 1 || days > MAX_WINDOW_DAYS) throw validationError(`days: must be an integer from 1 to ${MAX_WINDOW_DAYS}`);
  return days;
}

export const VERSIONS_PAGE = { limit: 20, maxLimit: 100 };
export const FIELDS_PAGE = { limit: 200, maxLimit: 1000 };

const versionsLimit = (req: Request) => parseLimitOffset({ limit: req.query.limit }, VERSIONS_PAGE).limit;

/** Mounted at /analytics/schema, after the analytics router's ADMIN check. */
export function registryAdminRoutes(registry: RegistryService): Router {
  const router = Router();
  router
    .route('/versions')
    .get(async (req, res) => void res.json(await registry.listVersions(principalOf(req), versionsLimit(req))))
    .all(methodNotAllowed);
  router
    .route('/versions/served')
    .get(async (req, res) => void res.json(await registry.servedVersionFor(principalOf(req))))
    .all(methodNotAllowed);
  router
    .route('/versions/:id')
    .get(async (req, res) => void res.json(await registry.version(principalOf(req), parseUuid(req.params.id, 'id'))))
    .all(methodNotAllowed);
  router
    .route('/usage')
    .get(async (req, res) => {
      const page = parseLimitOffset(req.query, FIELDS_PAGE);
      const report = await registry.fieldUsage(principalOf(req), parseDays(req.query.days));
      res.json({ ...report, fields: fieldsPage(report.fields, page) });
    })
    .all(methodNotAllowed);
  router
    .route('/usage-export')
    .get(async (req, res) => void res.json(await registry.exportFor(principalOf(req), parseDays(req.query.days))))
    .all(methodNotAllowed);
  return router;
}

/** Mounted at /analytics/internal, before the analytics router's token check: the internal key instead. */
export function registryInternalRoutes(registry: RegistryService, internalApiKey: string): Router {
  const router = Router();
  router.use(requireInternalKey(internalApiKey));
  router
    .route('/usage')
    .post(async (req, res) => void res.status(202).json(await registry.report(await validateBody(UsageReportRequest, req.body))))
    .all(methodNotAllowed);
  router
    .route('/schema/versions')
    .post(async (req, res) => {
      const { version, created } = await registry.record(await validateBody(SchemaVersionRequest, req.body));
      res.status(created ? 201 : 200).json(version);
    })
    .all(methodNotAllowed);
  router
    .route('/schema/versions/served')
    .get(async (_req, res) => void res.json(await registry.servedVersion()))
    .all(methodNotAllowed);
  router
    .route('/schema/usage-export')
    .get(async (req, res) => void res.json(await registry.export(parseDays(req.query.days))))
    .all(methodNotAllowed);
  return router;
}
