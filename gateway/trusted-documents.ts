/**
 * Trusted documents at the gateway (CONTRACT §11): a request may name a document of the manifest
 * (gateway/admin/src/api/generated/persisted-documents.json, generated from the admin UI's
 * operations: schema/persisted-documents.ts) by `documentId` or by Apollo's
 * `extensions.persistedQuery.sha256Hash`, and `GRAPHQL_TRUSTED_DOCUMENTS` decides what happens to a
 * document sent as text:
 * - `off`: it runs (ids resolve in every mode, so the admin UI works whatever the setting);
 * - `allow`: it runs, and the first request of each distinct text is logged with its hash, the list
 *   to review before switching to `enforce`;
 * - `enforce`: only a text of the manifest runs; any other is refused with 400
 *   PERSISTED_QUERY_NOT_ALLOWED before it is parsed.
 * An id the manifest lacks is 400 PERSISTED_QUERY_NOT_FOUND in every mode: there is no registration,
 * as the point is that clients cannot add documents. An Apollo client registering an automatic
 * persisted query (its hash with its text) is treated as the text.
 *
 * The request body is resolved to a plain `{ query, variables, operationName }` before Apollo Server
 * sees it, on both paths (gateway/graphql-front.ts and the app's route), so validation, the document
 * cache and the limits run as for any query.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TrustedDocumentMode } from '../platform/config';
import { GRAPHQL_CODES } from '../platform/graphql-errors';
import type { Logger } from '../platform/logger';

/** One document of Apollo's persisted query manifest format. */
export interface PersistedOperation {
  /** sha256 hex of `body`. */
  id: string;
  name: string;
  type: 'query' | 'mutation' | 'subscription';
  body: string;
}

export interface PersistedManifest {
  format: 'apollo-persisted-query-manifest';
  version: 1;
  operations: PersistedOperation[];
}

export const documentId = (body: string) => createHash('sha256').update(body).digest('hex');

export const PERSISTED_DOCUMENTS_PATH = path.join(__dirname, 'admin', 'src', 'api', 'generated', 'persisted-documents.json');

/** A request refused before Apollo Server: always a 400 with one error. */
export interface Refusal {
  status: 400;
  body: { errors: { message: string; extensions: { code: string } }[] };
}

export interface TrustedDocuments {
  /** The body Apollo Server gets (ids replaced by their text), or the refusal. */
  resolve(body: unknown): { body: unknown } | { refusal: Refusal };
  /** Whether a document text sent by GET may run. */
  admitsText(text: string): Refusal | undefined;
}

const refusal = (code: string, message: string): { refusal: Refusal } => ({ refusal: { status: 400, body: { errors: [{ message, extensions: { code } }] } } });

export const NOT_ALLOWED_MESSAGE = 'Only trusted documents run here: send the documentId of a document of the manifest';

/** Distinct texts logged in `allow` mode before the memory of them starts again (it only spares the log). */
const LOGGED_TEXTS_LIMIT = 10_000;

export function readManifest(file: string = PERSISTED_DOCUMENTS_PATH): PersistedManifest {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as PersistedManifest;
}

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id a body names, by `documentId` or by Apollo's persistedQuery extension. */
function namedId(body: Record<string, unknown>): { id: string; ours: boolean } | undefined {
  if (typeof body.documentId === 'string') return { id: body.documentId, ours: true };
  const persisted = isRecord(body.extensions) ? body.extensions.persistedQuery : undefined;
  return isRecord(persisted) && typeof persisted.sha256Hash === 'string' ? { id: persisted.sha256Hash, ours: false } : undefined;
}

/** The body without the id, and without the persistedQuery extension (Apollo Server would look it up again). */
function withText(body: Record<string, unknown>, query: string): Record<string, unknown> {
  const { documentId: _id, extensions, ...rest } = body;
  if (!isRecord(extensions)) return { ...rest, query };
  const { persistedQuery: _persisted, ...others } = extensions;
  return Object.keys(others).length > 0 ? { ...rest, extensions: others, query } : { ...rest, query };
}

export function trustedDocuments(manifest: PersistedManifest, mode: TrustedDocumentMode, logger: Logger): TrustedDocuments {
  const byId = new Map(manifest.operations.map((operation) => [operation.id, operation.body]));
  const texts = new Set(byId.values());
  const logged = new Set<string>();

  const admitsText = (text: string): Refusal | undefined => {
    if (texts.has(text)) return undefined;
    if (mode === 'enforce') return refusal(GRAPHQL_CODES.PERSISTED_QUERY_NOT_ALLOWED, NOT_ALLOWED_MESSAGE).refusal;
    if (mode === 'allow') {
      const hash = documentId(text);
      if (!logged.has(hash)) {
        if (logged.size >= LOGGED_TEXTS_LIMIT) logged.clear();
        logged.add(hash);
        logger.info({ documentId: hash, document: text.slice(0, 500) }, 'graphql document outside the trusted documents manifest');
      }
    }
    return undefined;
  };

  return {
    admitsText,
    resolve(body) {
      if (!isRecord(body)) return { body };
      const named = namedId(body);
      const known = named && byId.get(named.id);
      if (named && known !== undefined) {
        if (typeof body.query === 'string' && body.query !== known) return refusal(GRAPHQL_CODES.BAD_REQUEST, 'The document sent is not the one its id names');
        return { body: withText(body, known) };
      }
      if (named && (named.ours || typeof body.query !== 'string')) return refusal(GRAPHQL_CODES.PERSISTED_QUERY_NOT_FOUND, 'No trusted document has this id');
      if (typeof body.query === 'string') {
        const refused = admitsText(body.query);
        if (refused) return { refusal: refused };
      }
      return { body };
    },
  };
}
