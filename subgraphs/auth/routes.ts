/** REST routes of the auth service (interface §4.1): parse, rate-limit, call the service, answer. */
import { Router, type RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { methodNotAllowed } from '../../rest-compat/app';
import { authenticate, principalOf, requireInternalKey, requireRole, type TokenVerifier } from '../../platform/auth';
import { AppError } from '../../platform/errors';
import { parseUuid, validateBody } from '../../platform/validation';
import { deviceName } from './device';
import type { AccountEmails } from './account-email';
import { ForgotPasswordRequestDto, LoginRequestDto, RefreshTokenRequestDto, RegisterRequestDto, ResetPasswordRequestDto, VerifyEmailRequestDto } from './dto';
import type { SigningKey } from './keys';
import type { AuthService } from './service';
import type { SessionDirectory } from './sessions';

export interface RateLimitSettings {
  windowMs: number;
  max: number;
  /** Where the counters live, per limiter (`prefix` names the route); shared by the replicas. */
  store?: (prefix: string) => Store;
}

/** Per client address and per route: 429 with Retry-After once `max` attempts fall in the window. */
function attemptsLimit(settings: RateLimitSettings, route: string): RequestHandler {
  return rateLimit({
    store: settings.store?.(`${route}:`),
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

/** Token answers must not be kept by browsers or proxies (CONTRACT §2). */
const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

export interface AuthRouteDeps {
  service: AuthService;
  emails: AccountEmails;
  sessions: SessionDirectory;
  key: SigningKey;
  verifier: TokenVerifier;
  limits: RateLimitSettings;
  internalApiKey: string;
  /** How long a revoked session's access tokens could still be presented (lifetime and clock tolerance). */
  revocationHorizonMs: number;
}

export function authRoutes({ service, emails, sessions, key, verifier, limits, internalApiKey, revocationHorizonMs }: AuthRouteDeps): Router {
  const router = Router();

  router
    .route('/register')
    .post(attemptsLimit(limits, 'register'), async (req, res) => {
      res.json(await service.register(await validateBody(RegisterRequestDto, req.body)));
    })
    .all(methodNotAllowed);

  router
    .route('/login')
    .post(noStore, attemptsLimit(limits, 'login'), async (req, res) => {
      const request = await validateBody(LoginRequestDto, req.body);
      res.json(await service.login(request, deviceName(req.headers['user-agent'])));
    })
    .all(methodNotAllowed);

  router
    .route('/refresh')
    .post(noStore, attemptsLimit(limits, 'refresh'), async (req, res) => {
      const { refreshToken } = await validateBody(RefreshTokenRequestDto, req.body);
      res.json(await service.refresh(refreshToken));
    })
    .all(methodNotAllowed);

  router
    .route('/password/forgot')
    .post(attemptsLimit(limits, 'password-forgot'), async (req, res) => {
      const { email } = await validateBody(ForgotPasswordRequestDto, req.body);
      await emails.forgotPassword(email);
      res.status(202).end();
    })
    .all(methodNotAllowed);

  router
    .route('/password/reset')
    .post(noStore, attemptsLimit(limits, 'password-reset'), async (req, res) => {
      const { token, password } = await validateBody(ResetPasswordRequestDto, req.body);
      await emails.resetPassword(token, password);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/email/verify')
    .post(attemptsLimit(limits, 'email-verify'), async (req, res) => {
      const { token } = await validateBody(VerifyEmailRequestDto, req.body);
      await emails.verifyEmail(token);
      res.status(204).end();
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
      const principal = principalOf(req);
      await sessions.endAll(principal, principal.userId);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/sessions')
    .get(authenticate(verifier), async (req, res) => {
      res.json(await sessions.mine(principalOf(req)));
    })
    .all(methodNotAllowed);

  router
    .route('/sessions/:sessionId')
    .delete(authenticate(verifier), async (req, res) => {
      await sessions.end(principalOf(req), parseUuid(req.params.sessionId, 'sessionId'));
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/users/:userId/sessions')
    .get(authenticate(verifier), requireRole('ADMIN'), async (req, res) => {
      res.json(await sessions.ofUser(principalOf(req), parseUuid(req.params.userId, 'userId')));
    })
    .delete(authenticate(verifier), requireRole('ADMIN'), async (req, res) => {
      await sessions.endAll(principalOf(req), parseUuid(req.params.userId, 'userId'));
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/internal/revoked-sessions')
    .get(requireInternalKey(internalApiKey), async (_req, res) => {
      res.json(await sessions.recentlyRevoked(revocationHorizonMs));
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
