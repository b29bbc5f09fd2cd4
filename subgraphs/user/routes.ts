/** REST routes of the user service (interface §4.2): parse, authorize, call the service, answer. */
import { Router } from 'express';
import { authenticate, principalOf, requireInternalKey, type TokenVerifier } from '../../rest-compat/auth';
import { methodNotAllowed } from '../../rest-compat/app';
import { parseUuid, requireQueryString, validateBody, validationError } from '../../rest-compat/validation';
import { CreateUserProfileRequest, UserRequestDto } from './dto';
import type { UserService } from './service';

/** The longest field a search looks in (email, 100 characters): a longer keyword matches nothing. */
export const MAX_KEYWORD_LENGTH = 100;

/** `keyword` of a profile search: not blank, and short enough to be a LIKE pattern every database takes. GraphQL's `searchUsers` uses it too. */
export function parseKeyword(value: unknown): string {
  const keyword = requireQueryString(value, 'keyword');
  if (keyword.length > MAX_KEYWORD_LENGTH) throw validationError(`keyword: must be shorter than or equal to ${MAX_KEYWORD_LENGTH} characters`);
  return keyword;
}

export function userRoutes(service: UserService, verifier: TokenVerifier, internalApiKey: string): Router {
  const router = Router();

  router
    .route('/create')
    .post(requireInternalKey(internalApiKey), async (req, res) => {
      const request = await validateBody(CreateUserProfileRequest, req.body);
      res.json(await service.createProfile(request));
    })
    .all(methodNotAllowed);

  // Every other route needs a bearer token.
  router.use(authenticate(verifier));

  router
    .route('/')
    .get(async (req, res) => {
      res.json(await service.listUsers(principalOf(req)));
    })
    .all(methodNotAllowed);

  router
    .route('/search')
    .get(async (req, res) => {
      const keyword = parseKeyword(req.query.keyword);
      res.json(await service.searchUsers(principalOf(req), keyword));
    })
    .all(methodNotAllowed);

  router
    .route('/update/:id')
    .put(async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      const request = await validateBody(UserRequestDto, req.body);
      res.json(await service.updateUser(principalOf(req), id, request));
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get(async (req, res) => {
      res.json(await service.getUser(parseUuid(req.params.id, 'id')));
    })
    .delete(async (req, res) => {
      const id = parseUuid(req.params.id, 'id');
      await service.deleteUser(principalOf(req), id);
      res.type('text/plain').send(`User with id : ${id} Deleted successfully`);
    })
    .all(methodNotAllowed);

  return router;
}
