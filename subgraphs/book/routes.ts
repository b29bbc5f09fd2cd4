/** REST routes of the book service (CONTRACT §4): parse, authorize, call the service, answer. */
import { Router, type Request } from 'express';
import { methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, requireRole, type TokenVerifier } from '../../rest-compat/auth';
import { validationFailed } from '../../rest-compat/errors';
import { isUuid, parseUuid } from '../../rest-compat/validation';
import { CONTROL_CHARACTERS, parseBookRequest } from './dto';
import { DEFAULT_LIMIT, MAX_LIMIT, type BookListQuery, type BookService } from './service';

export const MAX_BATCH = 100;
const MAX_QUERY_LENGTH = 200;
const MAX_OFFSET = 2_147_483_647;

function integerParameter(value: unknown, fallback: number, min: number, max: number): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return undefined;
  const number = Number(value);
  return number >= min && number <= max ? number : undefined;
}

/** `q`, `limit` (1..100, default 20) and `offset` (>= 0, default 0); every bad one is listed in one 400. GraphQL's `books` uses it too. */
export function parseListQuery(query: Request['query']): BookListQuery {
  const errors: string[] = [];
  const { q } = query;
  if (q !== undefined) {
    if (typeof q !== 'string') errors.push('q: must be a single string');
    else if (q.length > MAX_QUERY_LENGTH) errors.push(`q: must be shorter than or equal to ${MAX_QUERY_LENGTH} characters`);
    else if (CONTROL_CHARACTERS.test(q)) errors.push('q: must not contain control characters');
  }
  const limit = integerParameter(query.limit, DEFAULT_LIMIT, 1, MAX_LIMIT);
  if (limit === undefined) errors.push(`limit: must be an integer between 1 and ${MAX_LIMIT}`);
  const offset = integerParameter(query.offset, 0, 0, MAX_OFFSET);
  if (offset === undefined) errors.push(`offset: must be an integer between 0 and ${MAX_OFFSET}`);
  if (errors.length > 0 || limit === undefined || offset === undefined) throw validationFailed(errors);
  return { q: q as string | undefined, limit, offset };
}

/** The batch body: a JSON array of at most 100 UUIDs. */
function parseIdList(body: unknown): string[] {
  if (!Array.isArray(body)) throw validationFailed(['ids: must be a JSON array of book ids']);
  if (body.length > MAX_BATCH) throw validationFailed([`ids: must contain at most ${MAX_BATCH} ids`]);
  const errors = body.flatMap((value: unknown, index) => (isUuid(value) ? [] : [`ids[${index}]: must be a UUID`]));
  if (errors.length > 0) throw validationFailed(errors);
  return body as string[];
}

export function bookRoutes(service: BookService, verifier: TokenVerifier): Router {
  const router = Router();
  // Reading is public; writing needs an ADMIN token (401 without one, 403 for a USER).
  const admin = [authenticate(verifier), requireRole('ADMIN')];

  router
    .route('/')
    .get(async (req, res) => {
      res.json(await service.listBooks(parseListQuery(req.query)));
    })
    .all(methodNotAllowed);

  router
    .route('/batch')
    .post(async (req, res) => {
      res.json(await service.getBooks(parseIdList(req.body)));
    })
    .all(methodNotAllowed);

  router
    .route('/create')
    .post(...admin, async (req, res) => {
      const request = await parseBookRequest(req.body);
      res.status(201).json(await service.createBook(principalOf(req), request));
    })
    .all(methodNotAllowed);

  router
    .route('/update/:id')
    .put(...admin, async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      const request = await parseBookRequest(req.body);
      res.json(await service.updateBook(principalOf(req), id, request));
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get(async (req, res) => {
      res.json(await service.getBook(parseUuid(req.params.id, 'id')));
    })
    .delete(...admin, async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      await service.deleteBook(principalOf(req), id);
      res.type('text/plain').send(`Book with id : ${id} Deleted successfully`);
    })
    .all(methodNotAllowed);

  return router;
}
