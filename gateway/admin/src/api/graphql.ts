/**
 * The UI's only data channel: POSTs a stored operation (gateway/admin/operations/*.graphql, as a
 * typed document generated from it: generated/operations.ts) to the gateway's /graphql with the
 * admin's bearer token, and answers its typed result. An UNAUTHENTICATED answer refreshes the
 * session once and retries. The operation goes by its id in the trusted documents manifest
 * (generated/persisted-documents.json, generated with the typed documents), which the gateway
 * resolves in every GRAPHQL_TRUSTED_DOCUMENTS mode and requires under `enforce`.
 */
import { accessToken, refresh } from './auth';
import type { TypedDocumentString } from './generated/operations';
import manifest from './generated/persisted-documents.json';

export class GraphqlRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** `"<field>: <message>"` lines of a validation failure. */
    readonly validationErrors: string[] = [],
  ) {
    super(message);
    this.name = 'GraphqlRequestError';
  }
}

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; validationErrors?: unknown } }[];
}

/** Each document's id by its text: the text is what a typed document holds. */
const DOCUMENT_IDS = new Map(manifest.operations.map((operation) => [operation.body, operation.id]));

/** The request body: the document's id, or its text for a document outside the manifest (none is, while the generated files are current). */
function requestBody(document: string, variables: unknown): string {
  const id = DOCUMENT_IDS.get(document);
  return JSON.stringify(id ? { documentId: id, variables } : { query: document, variables });
}

const SIGNED_OUT = new GraphqlRequestError('You are signed out.', 'UNAUTHENTICATED');

async function send<T>(document: string, variables: unknown, token: string): Promise<{ status: number; body: GraphqlAnswer<T> | undefined }> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${token}` },
      body: requestBody(document, variables),
    });
  } catch {
    throw new GraphqlRequestError('The gateway cannot be reached. Check that the bookstore is running.', 'NETWORK_ERROR');
  }
  return { status: res.status, body: (await res.json().catch(() => undefined)) as GraphqlAnswer<T> | undefined };
}

const unauthenticated = (status: number, body: GraphqlAnswer<unknown> | undefined) =>
  status === 401 || (body?.errors ?? []).some((error) => error.extensions?.code === 'UNAUTHENTICATED');

/** The variables argument: required when the operation declares a required variable, else optional. */
type VariablesArgument<V> = Record<string, never> extends V ? [variables?: V] : [variables: V];

export async function graphql<T, V>(document: TypedDocumentString<T, V>, ...[variables]: VariablesArgument<V>): Promise<T> {
  const token = await accessToken();
  if (!token) throw SIGNED_OUT;
  const text = document.toString();
  let answer = await send<T>(text, variables ?? {}, token);
  if (unauthenticated(answer.status, answer.body)) {
    if (!(await refresh())) throw SIGNED_OUT;
    const renewed = await accessToken();
    if (!renewed) throw SIGNED_OUT;
    answer = await send<T>(text, variables ?? {}, renewed);
  }
  const { status, body } = answer;
  const first = body?.errors?.[0];
  if (first) {
    const details = first.extensions?.validationErrors;
    throw new GraphqlRequestError(first.message, first.extensions?.code, Array.isArray(details) ? details.map(String) : []);
  }
  if (!body?.data) throw new GraphqlRequestError(`The gateway answered HTTP ${status} without data.`, 'BAD_RESPONSE');
  return body.data;
}

/** Validation lines by field (`input.phoneNumber: ...` and `phoneNumber: ...` both land on phoneNumber). */
export function errorsByField(error: GraphqlRequestError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of error.validationErrors) {
    const at = line.indexOf(': ');
    if (at < 0) continue;
    const field = line.slice(0, at).replace(/^input\./, '');
    fields[field] = fields[field] ? `${fields[field]}; ${line.slice(at + 2)}` : line.slice(at + 2);
  }
  return fields;
}
