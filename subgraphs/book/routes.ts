/** REST routes of the book service (CONTRACT §4): parse, authorize, call the service, answer. */
import { Router, type Express, type Response } from 'express';
import { methodNotAllowed } from '../../rest-compat/app';
import { publicRead } from '../../rest-compat/json-answers';
import { authenticate, principalOf, requireInternalKey, requireRole, type TokenVerifier } from '../../platform/auth';
import { StockCommitRequest, StockHoldRequest, StockReleaseRequest } from '../../platform/contracts/stock';
import { validationFailed } from '../../platform/errors';
import { isUuid, parseUuid, validateBody } from '../../platform/validation';
import { COVER_CACHE_CONTROL } from './covers';
import { parseAuthorRequest, parseBookRequest, parseCategoryRequest, parsePublisherRequest, parseListQuery, parseSearchQuery } from './dto';
import type { Inventory } from './inventory';
import type { ReferenceApi } from './references';
import type { BookService, Catalogue } from './service';
import { parseCoverUpload } from './upload';

export const MAX_BATCH = 100;

/** The batch body: a JSON array of at most 100 UUIDs. */
function parseIdList(body: unknown): string[] {
  if (!Array.isArray(body)) throw validationFailed(['ids: must be a JSON array of book ids']);
  if (body.length > MAX_BATCH) throw validationFailed([`ids: must contain at most ${MAX_BATCH} ids`]);
  const errors = body.flatMap((value: unknown, index) => (isUuid(value) ? [] : [`ids[${index}]: must be a UUID`]));
  if (errors.length > 0) throw validationFailed(errors);
  return body as string[];
}

/** A page of books with the number of matches in `X-Total-Count`, as the list and the search answer. */
function sendPage(res: Response, page: { books: unknown[]; total: number }): void {
  res.setHeader('X-Total-Count', String(page.total));
  res.json(page.books);
}

/** Reading is public (and cacheable: rest-compat/json-answers.ts); writing needs an ADMIN token (401 without one, 403 for a USER). */
const adminOnly = (verifier: TokenVerifier) => [authenticate(verifier), requireRole('ADMIN')];

function bookRoutes(service: BookService, verifier: TokenVerifier): Router {
  const router = Router();
  const admin = adminOnly(verifier);

  router
    .route('/')
    .get(publicRead, async (req, res) => {
      sendPage(res, await service.listBooks(parseListQuery(req.query)));
    })
    .all(methodNotAllowed);

  // Before `/:id`, which would take "search" for a book id.
  router
    .route('/search')
    .get(publicRead, async (req, res) => {
      sendPage(res, await service.searchBooks(parseSearchQuery(req.query)));
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

  // `/:id/cover` is mounted before the JSON body parser (see mountCoverUpload).

  router
    .route('/:id')
    .get(publicRead, async (req, res) => {
      res.json(await service.getBook(parseUuid(req.params.id, 'id')));
    })
    .delete(...admin, async (req, res) => {
      await service.deleteBook(principalOf(req), parseUuid(req.params.id, 'id'));
      res.type('text/plain').send('Deleted SuccessFully');
    })
    .all(methodNotAllowed);

  return router;
}

/**
 * `/api/books/{id}/cover`: the upload is multipart, so the path is mounted ahead of the JSON-only
 * body handling; the locally stored image is served from it too.
 */
export function mountCoverUpload(app: Express, service: BookService, verifier: TokenVerifier): void {
  app
    .route('/api/books/:id/cover')
    .get(async (req, res) => {
      const image = await service.readCover(parseUuid(req.params.id, 'id'));
      res.setHeader('Cache-Control', COVER_CACHE_CONTROL);
      res.type(image.contentType).send(image.bytes);
    })
    .post(...adminOnly(verifier), async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      const image = await parseCoverUpload(req);
      res.json(await service.uploadCover(principalOf(req), id, image));
    })
    .all(methodNotAllowed);
}

/** The same five routes for authors, categories and publishers. */
function referenceRoutes<Req, Res>(catalogue: ReferenceApi<Req, Res>, parse: (body: unknown) => Promise<Req>, verifier: TokenVerifier): Router {
  const router = Router();
  const admin = adminOnly(verifier);
  router
    .route('/')
    .get(publicRead, async (_req, res) => {
      res.json(await catalogue.list());
    })
    .all(methodNotAllowed);
  router
    .route('/create')
    .post(...admin, async (req, res) => {
      const request = await parse(req.body);
      res.status(201).json(await catalogue.create(principalOf(req), request));
    })
    .all(methodNotAllowed);
  router
    .route('/update/:id')
    .put(...admin, async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      const request = await parse(req.body);
      res.json(await catalogue.update(principalOf(req), id, request));
    })
    .all(methodNotAllowed);
  router
    .route('/:id')
    .get(publicRead, async (req, res) => {
      res.json(await catalogue.get(parseUuid(req.params.id, 'id')));
    })
    .delete(...admin, async (req, res) => {
      await catalogue.remove(principalOf(req), parseUuid(req.params.id, 'id'));
      res.type('text/plain').send('Success');
    })
    .all(methodNotAllowed);
  return router;
}

/** Everything the service answers under `/api`. */
export function catalogueRoutes(catalogue: Catalogue, verifier: TokenVerifier): Router {
  const router = Router();
  router.use('/books', bookRoutes(catalogue.books, verifier));
  router.use('/authors', referenceRoutes(catalogue.authors, parseAuthorRequest, verifier));
  router.use('/categories', referenceRoutes(catalogue.categories, parseCategoryRequest, verifier));
  router.use('/publishers', referenceRoutes(catalogue.publishers, parsePublisherRequest, verifier));
  return router;
}

/**
 * `/api/books/internal`: the stock holds and takes other services ask for (platform/contracts/stock.ts),
 * with the internal key only; the gateway does not route them (404 from outside).
 */
export function stockRoutes(inventory: Inventory, internalApiKey: string): Router {
  const router = Router();
  router.use(requireInternalKey(internalApiKey));
  router
    .route('/holds')
    .post(async (req, res) => {
      res.json(await inventory.hold(await validateBody(StockHoldRequest, req.body)));
    })
    .all(methodNotAllowed);
  router
    .route('/holds/release')
    .post(async (req, res) => {
      res.json({ released: await inventory.release(await validateBody(StockReleaseRequest, req.body)) });
    })
    .all(methodNotAllowed);
  router
    .route('/stock/commit')
    .post(async (req, res) => {
      res.json(await inventory.commit(await validateBody(StockCommitRequest, req.body)));
    })
    .all(methodNotAllowed);
  return router;
}
