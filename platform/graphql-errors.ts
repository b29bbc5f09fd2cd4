/**
 * The GraphQL errors of the gateway and every subgraph: the `extensions.code` values clients switch
 * on and the one message an internal error shows. The gateway tells a subgraph's internal error
 * (already logged by the subgraph) from its own by that message, so both take it from here.
 */

/** Every `extensions.code` a client can get from the gateway or a subgraph. */
export const GRAPHQL_CODES = {
  /** A request the server cannot run: malformed JSON, an operation it lacks (the gateway). */
  BAD_REQUEST: 'BAD_REQUEST',
  /** An argument or input the rules refuse (an AppError of status 400). */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** A document sent as text that the trusted documents manifest lacks, under `GRAPHQL_TRUSTED_DOCUMENTS=enforce` (gateway/trusted-documents.ts). */
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  /** A `documentId` (or persistedQuery hash without its text) that the manifest lacks. */
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  /** A document past the GraphQL limits (platform/query-limits.ts). */
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  /** Anything else; its message is always INTERNAL_ERROR_MESSAGE. */
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;

export type GraphqlCode = (typeof GRAPHQL_CODES)[keyof typeof GRAPHQL_CODES];

/** HTTP status of an AppError → the code clients switch on; an AppError of any other status is internal. */
export const CODE_OF_STATUS: Readonly<Record<number, GraphqlCode>> = {
  400: GRAPHQL_CODES.BAD_USER_INPUT,
  401: GRAPHQL_CODES.UNAUTHENTICATED,
  403: GRAPHQL_CODES.FORBIDDEN,
  404: GRAPHQL_CODES.NOT_FOUND,
  409: GRAPHQL_CODES.CONFLICT,
  503: GRAPHQL_CODES.SERVICE_UNAVAILABLE,
};

/** The message of every INTERNAL_SERVER_ERROR: what went wrong is logged, never shown. */
export const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred';

/**
 * The extensions a client may read: the code, the AppError's own stable code (`reason`) and its
 * `validationErrors`. A subgraph answers no other; the gateway drops any other it is handed.
 */
export const CLIENT_EXTENSIONS = ['code', 'reason', 'validationErrors'] as const;
