/**
 * The admin's session: the access token lives only in memory, the refresh token in sessionStorage
 * (it survives a reload of this tab and dies with it). Tokens come from the auth service's REST
 * routes, the only REST the UI speaks; the access token is refreshed a minute before it expires.
 */

export interface Session {
  accessToken: string;
  refreshToken: string;
  /** Epoch ms after which the access token is refreshed before use. */
  refreshAt: number;
  userId: string;
  email: string;
}

export type AuthState =
  { status: 'restoring' } | { status: 'signed-out'; notice?: { kind: 'refused' | 'ended' | 'signed-out'; message: string } } | { status: 'signed-in'; session: Session };

interface TokenAnswer {
  accessToken: string;
  refreshToken: string;
  /** Milliseconds. */
  expiresIn: number;
}

interface AccessClaims {
  sub?: string;
  role?: string;
  email?: string;
}

export const REFUSAL = 'This dashboard is for administrators';
const REFRESH_KEY = 'bookstore-admin.refresh-token';
const DEVICE_KEY = 'bookstore-admin.device-id';
const REFRESH_MARGIN_MS = 60_000;
const MIN_REFRESH_DELAY_MS = 5_000;

let state: AuthState = { status: 'restoring' };
const listeners = new Set<(next: AuthState) => void>();
let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | undefined;

export function authState(): AuthState {
  return state;
}

export function onAuthChange(listener: (next: AuthState) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setState(next: AuthState): void {
  state = next;
  for (const listener of listeners) listener(next);
}

/** Reads a JWT's payload; the UI only uses it to choose what to show, the services verify the token. */
export function claimsOf(token: string): AccessClaims {
  try {
    const part = token.split('.')[1] ?? '';
    const json = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    );
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as AccessClaims;
  } catch {
    return {};
  }
}

function deviceId(): string {
  let id = localStorage.getItem(DEVICE_KEY);
  if (!id) {
    id = `admin-ui-${crypto.randomUUID()}`;
    localStorage.setItem(DEVICE_KEY, id);
  }
  return id;
}

/** The contract's error envelope carries a readable `message`; anything else gets a generic line. */
async function failureMessage(res: Response, fallback: string): Promise<string> {
  const body = (await res.json().catch(() => undefined)) as { message?: unknown } | undefined;
  if (res.status === 429) return `Too many attempts; try again in ${res.headers.get('Retry-After') ?? 'a'} seconds.`;
  return typeof body?.message === 'string' ? body.message : `${fallback} (HTTP ${res.status})`;
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

function clearLocal(): void {
  clearTimeout(timer);
  timer = undefined;
  sessionStorage.removeItem(REFRESH_KEY);
}

async function revoke(refreshToken: string): Promise<void> {
  await post('/auth/logout', { refreshToken }).catch(() => undefined);
}

/** Takes a token pair: a non-admin is logged out at once and refused. */
async function adopt(tokens: TokenAnswer): Promise<boolean> {
  const claims = claimsOf(tokens.accessToken);
  if (claims.role !== 'ADMIN') {
    clearLocal();
    await revoke(tokens.refreshToken);
    setState({ status: 'signed-out', notice: { kind: 'refused', message: `${claims.email ?? 'This account'} is not an administrator account, so it was signed out again.` } });
    return false;
  }
  const delay = Math.max(tokens.expiresIn - REFRESH_MARGIN_MS, MIN_REFRESH_DELAY_MS);
  sessionStorage.setItem(REFRESH_KEY, tokens.refreshToken);
  clearTimeout(timer);
  timer = setTimeout(() => void refresh(), delay);
  setState({
    status: 'signed-in',
    session: { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, refreshAt: Date.now() + delay, userId: claims.sub ?? '', email: claims.email ?? '' },
  });
  return true;
}

/** Signs in; resolves with an error message to show, or undefined when the admin is in (or was refused). */
export async function signIn(email: string, password: string): Promise<string | undefined> {
  let res: Response;
  try {
    res = await post('/auth/login', { email, password, deviceId: deviceId() });
  } catch {
    return 'The gateway cannot be reached. Check that the bookstore is running.';
  }
  if (!res.ok) return failureMessage(res, 'Sign-in failed');
  await adopt((await res.json()) as TokenAnswer);
  return undefined;
}

/**
 * Rotates the refresh token once, however many callers ask at the same moment (a reused refresh
 * token ends the session). Resolves false, and signs out, when the session is over.
 */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const refreshToken = state.status === 'signed-in' ? state.session.refreshToken : sessionStorage.getItem(REFRESH_KEY);
    if (!refreshToken) {
      setState({ status: 'signed-out' });
      return false;
    }
    let res: Response | undefined;
    try {
      res = await post('/auth/refresh', { refreshToken });
      if (res.ok) return await adopt((await res.json()) as TokenAnswer);
    } catch {
      res = undefined;
    }
    if (res === undefined || res.status >= 500 || res.status === 429) {
      // The session may still be good: keep the refresh token and try again on the next request.
      if (state.status === 'restoring')
        setState({ status: 'signed-out', notice: { kind: 'ended', message: 'The sign-in service is not answering. Reload the page to try again.' } });
      return false;
    }
    clearLocal();
    setState({ status: 'signed-out', notice: { kind: 'ended', message: 'Your session has ended. Sign in again.' } });
    return false;
  })().finally(() => {
    refreshing = undefined;
  });
  return refreshing;
}

/** The access token for the next request, refreshed first when it is due (timers sleep in background tabs). */
export async function accessToken(): Promise<string | undefined> {
  if (state.status === 'signed-in' && Date.now() >= state.session.refreshAt) await refresh();
  return state.status === 'signed-in' ? state.session.accessToken : undefined;
}

/** At start: a refresh token left in this tab's sessionStorage brings the session back. */
export async function restore(): Promise<void> {
  if (sessionStorage.getItem(REFRESH_KEY)) await refresh();
  else setState({ status: 'signed-out' });
}

export async function signOut(): Promise<void> {
  const refreshToken = state.status === 'signed-in' ? state.session.refreshToken : sessionStorage.getItem(REFRESH_KEY);
  clearLocal();
  if (refreshToken) await revoke(refreshToken);
  setState({ status: 'signed-out', notice: { kind: 'signed-out', message: 'You have signed out.' } });
}
