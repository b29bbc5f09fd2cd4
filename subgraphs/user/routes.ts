/** REST routes of the user service (interface §4.2): parse, authorize, call the service, answer. */
import { Router } from 'express';
import { authenticate, principalOf, requireInternalKey, type TokenVerifier } from '../../platform/auth';
import { methodNotAllowed } from '../../rest-compat/app';
import { parseUuid, validateBody } from '../../platform/validation';
import { CreateUserProfileRequest } from '../../platform/contracts/profiles';
import { parseKeyword, UserRequestDto } from './dto';
import type { UserService } from './service';

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
