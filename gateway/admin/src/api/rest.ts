/**
 * The catalogue pages' channel: the book service's REST routes through the gateway (the same ones
 * the shop clients use; GraphQL has no catalogue writes and a cover is a multipart upload). Like
 * graphql.ts it sends the admin's bearer token and, on a 401, refreshes the session once and retries.
 * A failure carries the contract's envelope: its message and `validationErrors`.
 */
import { accessToken, refresh } from './auth';
import { GraphqlRequestError } from './graphql';

/** An error answer of a REST route, shown like a GraphQL one (`code` is the HTTP status). */
export class RestRequestError extends GraphqlRequestError {
  constructor(
    message: string,
    readonly status: number,
    validationErrors: string[] = [],
  ) {
    super(message, `HTTP ${status}`, validationErrors);
    this.name = 'RestRequestError';
  }
}

const SIGNED_OUT = new RestRequestError('You are signed out.', 401);

interface Envelope {
  message?: string;
  validationErrors?: string[] | null;
}

async function send(method: string, path: string, body: unknown, token: string | undefined): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  try {
    return await fetch(path, { method, headers, body: payload });
  } catch {
    throw new RestRequestError('The gateway cannot be reached. Check that the bookstore is running.', 0);
  }
}

/** Calls a catalogue route; JSON answers are parsed, text ones (`Success`) returned as text. */
export async function rest<T>(method: string, path: string, body?: unknown): Promise<{ data: T; total: number | undefined }> {
  const token = await accessToken();
  if (!token) throw SIGNED_OUT;
  let res = await send(method, path, body, token);
  if (res.status === 401) {
    if (!(await refresh())) throw SIGNED_OUT;
    res = await send(method, path, body, await accessToken());
  }
  const type = res.headers.get('content-type') ?? '';
  const parsed: unknown = type.includes('json') ? await res.json().catch(() => undefined) : await res.text();
  if (!res.ok) {
    const envelope = (parsed ?? {}) as Envelope;
    throw new RestRequestError(envelope.message ?? `The gateway answered HTTP ${res.status}.`, res.status, envelope.validationErrors ?? []);
  }
  const total = res.headers.get('x-total-count');
  return { data: parsed as T, total: total === null ? undefined : Number(total) };
}
