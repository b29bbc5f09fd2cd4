/** REST routes of the auth service (interface §4.1): parse, rate-limit, call the service, answer. */
import { Router, type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, type TokenVerifier } from '../../rest-compat/auth';
import { AppError } from '../../rest-compat/errors';
import { validateBody } from '../../rest-compat/validation';
import { deviceName } from './device';
import { LoginRequestDto, RefreshTokenRequestDto, RegisterRequestDto } from './dto';
import type { SigningKey } from './keys';
import type { AuthService } from './service';

export interface RateLimitSettings {
  windowMs: number;
  max: number;
}

/** Per client address and per route: 429 with Retry-After once `max` attempts fall in the window. */
function attemptsLimit(settings: RateLimitSettings): RequestHandler {
  return rateLimit({
    windowMs: settings.windowMs,
    limit: settings.max,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    validate: false,
    handler: (req, _res, next) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now() + settings.windowMs) - Date.now()) / 1000));
      next(new AppError('TOO_MANY_REQUESTS', 'Too many attempts; try again later', 429, null, { 'Retry-After': String(seconds) }));
    },
  });
}

export function authRoutes(service: AuthService, key: SigningKey, verifier: TokenVerifier, limits: RateLimitSettings): Router {
  const router = Router();

  router
    .route('/register')
    .post(attemptsLimit(limits), async (req, res) => {
      res.json(await service.register(await validateBody(RegisterRequestDto, req.body)));
    })
    .all(methodNotAllowed);

  router
    .route('/login')
    .post(attemptsLimit(limits), async (req, res) => {
      const request = await validateBody(LoginRequestDto, req.body);
      res.json(await service.login(request, deviceName(req.headers['user-agent'])));
    })
    .all(methodNotAllowed);

  router
    .route('/refresh')
    .post(attemptsLimit(limits), async (req, res) => {
      const { refreshToken } = await validateBody(RefreshTokenRequestDto, req.body);
      res.json(await service.refresh(refreshToken));
    })
    .all(methodNotAllowed);

  router
    .route('/logout')
    .post(async (req, res) => {
      const { refreshToken } = await validateBody(RefreshTokenRequestDto, req.body);
      await service.logout(refreshToken);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/logout-all')
    .post(authenticate(verifier), async (req, res) => {
      await service.logoutAll(principalOf(req).userId);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/.well-known/jwks.json')
    .get((_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json(key.jwks);
    })
    .all(methodNotAllowed);

  return router;
}
