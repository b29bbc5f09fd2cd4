/**
 * The REST contract as OpenAPI 3.1 (openapi.yaml beside this file, copied beside the compiled JS by
 * `npm run build`): read and parsed once by whoever needs it (the gateway serves it, the tests check
 * every response against it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const OPENAPI_FILE = path.join(__dirname, 'openapi.yaml');

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface OpenApiMediaType {
  schema?: Record<string, unknown>;
  example?: unknown;
}

export interface OpenApiResponse {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId?: string;
  requestBody?: { content?: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
  [key: string]: unknown;
}

export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>> & Record<string, unknown>;

/** Answers every path shares (unknown path, unknown method, CORS preflight), stated once at the top. */
export type FallbackKind = 'unknownPath' | 'unknownMethod' | 'corsPreflight';

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, Record<string, unknown>>;
    responses: Record<string, OpenApiResponse>;
    [key: string]: unknown;
  };
  'x-fallback-responses': Record<FallbackKind, Record<string, OpenApiResponse>>;
  [key: string]: unknown;
}

export function loadOpenApiDocument(file: string = OPENAPI_FILE): OpenApiDocument {
  return parse(fs.readFileSync(file, 'utf8')) as OpenApiDocument;
}

/** The operations of a path item, in the document's order. */
export function operationsOf(item: OpenApiPathItem): [HttpMethod, OpenApiOperation][] {
  return HTTP_METHODS.flatMap((method) => (item[method] ? [[method, item[method]] as [HttpMethod, OpenApiOperation]] : []));
}

/** A response object with its `$ref` (to `#/components/responses/...`) followed. */
export function resolveResponse(document: OpenApiDocument, response: OpenApiResponse): OpenApiResponse {
  if (!response.$ref) return response;
  const name = /^#\/components\/responses\/(.+)$/.exec(response.$ref)?.[1];
  const target = name === undefined ? undefined : document.components.responses[name];
  if (!target) throw new Error(`unresolvable response reference ${response.$ref}`);
  return resolveResponse(document, target);
}
