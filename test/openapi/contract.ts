/**
 * Checks one HTTP answer against rest-compat/openapi.yaml: the route (method + path template), the
 * status, the media type and the body (ajv, JSON Schema 2020-12 with formats). Every response schema
 * of the document is compiled once, when the checker is built.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  loadOpenApiDocument,
  operationsOf,
  resolveResponse,
  type FallbackKind,
  type HttpMethod,
  type OpenApiDocument,
  type OpenApiPathItem,
  type OpenApiResponse,
} from '../../rest-compat/openapi';

/** What is not REST and so not in the document: GraphQL, the Stripe simulator, the admin UI, the docs themselves. */
export const NON_REST: readonly RegExp[] = [/^\/graphql(\/|$)/, /^\/simulator(\/|$)/, /^\/v1(\/|$)/, /^\/admin(\/|$)/, /^\/docs(\/|$)/, /^\/openapi\.json$/];

export const isNonRest = (pathname: string) => NON_REST.some((pattern) => pattern.test(pathname.toLowerCase()));

const DOCUMENT_ID = 'https://bookstore.local/openapi.json';

export interface Answer {
  method: string;
  /** The request path, without query. */
  path: string;
  status: number;
  contentType: string | undefined;
  /** The parsed JSON body, or the text of a text body. */
  body: unknown;
  /** The raw text, when there was one ('' for none). */
  text: string | undefined;
}

/** `GET /api/user/{id} 200`, or `x-fallback unknownPath 404`, or `exempt`. */
export type Outcome = { kind: 'validated'; key: string } | { kind: 'exempt' };

export class ContractViolation extends Error {
  constructor(answer: Answer, problem: string, details: string[] = []) {
    const lines = [`OpenAPI contract violation: ${answer.method} ${answer.path} answered ${answer.status}: ${problem}`, ...details.map((line) => `  - ${line}`)];
    if (answer.text !== undefined && answer.text !== '') lines.push(`  body: ${answer.text.length > 600 ? `${answer.text.slice(0, 600)}…` : answer.text}`);
    super(lines.join('\n'));
    this.name = 'ContractViolation';
  }
}

interface Route {
  template: string;
  segments: (string | null)[];
  /** '1' for a literal segment, '0' for a parameter: the highest wins, as OpenAPI prefers concrete paths. */
  rank: string;
  item: OpenApiPathItem;
}

/** One documented response: its media types with their compiled schemas; none means an empty body. */
interface CompiledResponse {
  media: { essence: string; validate: ValidateFunction | undefined }[];
}

const trimSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
const essenceOf = (contentType: string | undefined) => contentType?.split(';', 1)[0].trim().toLowerCase();

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** `#/components/schemas/X` → the document's registered schema, so every compiled schema shares the components. */
function absoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absoluteRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' ? inner.replace(/^#\/components\/schemas\//, `${DOCUMENT_ID}#/$defs/`) : absoluteRefs(inner),
    ]),
  );
}

export function formatAjvErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (error) => `${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}${Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : ''}`,
  );
}

export function createAjv(document: OpenApiDocument): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false, multipleOfPrecision: 9 });
  addFormats(ajv);
  // OpenAPI's own schema keywords, which carry no validation.
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  ajv.addSchema({ $id: DOCUMENT_ID, $defs: absoluteRefs(document.components.schemas) as Record<string, unknown> });
  return ajv;
}

export function compileSchema(ajv: Ajv2020, schema: Record<string, unknown>): ValidateFunction {
  return ajv.compile(absoluteRefs(schema) as Record<string, unknown>);
}

export class ResponseContract {
  readonly document: OpenApiDocument;
  private readonly ajv: Ajv2020;
  private readonly routes: Route[];
  private readonly compiled = new Map<OpenApiResponse, CompiledResponse>();

  constructor(document: OpenApiDocument = loadOpenApiDocument()) {
    this.document = document;
    this.ajv = createAjv(document);
    this.routes = Object.entries(document.paths).map(([template, item]) => {
      const segments = trimSlash(template)
        .split('/')
        .slice(1)
        .map((segment) => (/^\{[^}]+\}$/.test(segment) ? null : segment.toLowerCase()));
      return { template, segments, rank: segments.map((segment) => (segment === null ? '0' : '1')).join(''), item };
    });
    for (const { item } of this.routes) {
      for (const [, operation] of operationsOf(item)) for (const response of Object.values(operation.responses)) this.compile(response);
    }
    for (const responses of Object.values(document['x-fallback-responses'])) for (const response of Object.values(responses)) this.compile(response);
  }

  private compile(reference: OpenApiResponse): CompiledResponse {
    const known = this.compiled.get(reference);
    if (known) return known;
    const response = resolveResponse(this.document, reference);
    const media = Object.entries(response.content ?? {}).map(([type, content]) => ({
      essence: type.split(';', 1)[0].trim().toLowerCase(),
      validate: content.schema ? compileSchema(this.ajv, content.schema) : undefined,
    }));
    const compiled = { media };
    this.compiled.set(reference, compiled);
    return compiled;
  }

  /** The documented path template a request path falls under, concrete paths first. */
  routeOf(pathname: string): Route | undefined {
    const segments = trimSlash(pathname).split('/').slice(1).map(decodeSegment);
    let best: Route | undefined;
    for (const route of this.routes) {
      if (route.segments.length !== segments.length) continue;
      const matches = route.segments.every((literal, index) => (literal === null ? segments[index] !== '' : literal === segments[index].toLowerCase()));
      if (matches && (!best || route.rank > best.rank)) best = route;
    }
    return best;
  }

  /** Throws a ContractViolation when the answer is not what the document says. */
  check(answer: Answer): Outcome {
    if (isNonRest(answer.path)) return { kind: 'exempt' };
    const method = answer.method.toLowerCase() as HttpMethod;
    const status = String(answer.status);
    const route = this.routeOf(answer.path);
    // HEAD is served by every GET route, with the GET's status and no body.
    const operation = route ? (route.item[method] ?? (method === 'head' ? route.item.get : undefined)) : undefined;
    if (route && operation) {
      const response = operation.responses[status];
      if (!response) {
        throw new ContractViolation(
          answer,
          `status ${status} is not documented for ${answer.method} ${route.template} (documented: ${Object.keys(operation.responses).join(', ')})`,
        );
      }
      this.checkBody(answer, this.compile(response), method === 'head');
      const documentedMethod = route.item[method] ? method : 'get';
      return { kind: 'validated', key: `${documentedMethod.toUpperCase()} ${route.template} ${status}` };
    }
    // An internal path (`x-internal`) does not exist from outside: the gateway answers 404 to every method.
    const kinds: FallbackKind[] = route ? ['unknownMethod', ...(route.item['x-internal'] === true ? (['unknownPath'] as const) : [])] : ['unknownPath'];
    if (method === 'options') kinds.push('corsPreflight');
    for (const kind of kinds) {
      const response = this.document['x-fallback-responses'][kind][status];
      if (!response) continue;
      this.checkBody(answer, this.compile(response), method === 'head');
      return { kind: 'validated', key: `x-fallback ${kind} ${status}` };
    }
    if (route) {
      const methods = operationsOf(route.item).map(([name]) => name.toUpperCase());
      throw new ContractViolation(
        answer,
        `${answer.method} is not documented for ${route.template} (documented: ${methods.join(', ')}), and ${status} is not the documented answer to an unknown method`,
      );
    }
    throw new ContractViolation(answer, `the path matches no documented route, and ${status} is not the documented answer to an unknown path`);
  }

  private checkBody(answer: Answer, response: CompiledResponse, head: boolean): void {
    if (response.media.length === 0) {
      if (answer.text) throw new ContractViolation(answer, 'the documented answer has no body, but one was sent');
      return;
    }
    if (head) return;
    const essence = essenceOf(answer.contentType);
    const media = response.media.find((candidate) => candidate.essence === essence);
    if (!media) {
      throw new ContractViolation(answer, `Content-Type ${answer.contentType ?? '(none)'} is not documented (documented: ${response.media.map((m) => m.essence).join(', ')})`);
    }
    const body = essence === 'application/json' || essence?.endsWith('+json') ? answer.body : answer.text;
    if (media.validate && !media.validate(body)) {
      throw new ContractViolation(answer, 'the body does not match the documented schema', formatAjvErrors(media.validate.errors));
    }
  }
}
