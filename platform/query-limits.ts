/**
 * The GraphQL limits, one piece installed by the gateway and by every subgraph (CONTRACT §9), so a
 * query sent to a service's own port cannot amplify either. Spread `queryLimits()` into the
 * ApolloServer options.
 *
 * From @escape.tech/graphql-armor: maximum depth, aliases and directives per operation, and no field
 * suggestions ("Did you mean ...") in validation errors. They are validation rules, so they run once
 * per document: Apollo Server keeps validated documents in its document cache and skips parsing and
 * validation for a query text it has seen.
 *
 * Not from Armor:
 * - The token limit is graphql-js's own parser option (`maxTokens`), which Armor's token limit also
 *   builds on; Armor's Apollo plugin would parse every new document a second time to count them.
 * - The cost is demand control by `@cost` and `@listSize` (platform/query-cost.ts): Armor's cost
 *   limit gives every object and scalar a fixed weight and cannot multiply by list sizes. It is a
 *   validation rule, so it runs once per document, with a size given as a variable counted at the
 *   variable's default (else the argument's); for the few documents that pass a slicing argument as
 *   a variable (known once per document) a plugin measures again with the request's variables
 *   before anything runs. A refusal carries `extensions.cost: { estimated, max }`, and a request with
 *   the header `X-GraphQL-Cost: include` gets `{ estimated, actual, max }` in its answer's
 *   `extensions`, `actual` measured on the answer itself by the same weights.
 *
 * Introspection: `__schema` is exempt from the depth limit (its shape is bounded by the schema, and
 * graphql-js's own MaxIntrospectionDepthRule, part of the standard rules, refuses the cyclic
 * `fields { type { fields ... } }` nesting); `__` fields cost nothing. Aliases and tokens still apply.
 *
 * Every refusal is a 400 with `extensions.code` QUERY_TOO_COMPLEX (see `queryLimitCode`).
 */
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ApolloServerPlugin, GraphQLRequestContextWillSendResponse, GraphQLRequestListener } from '@apollo/server';
import {
  GraphQLError,
  Kind,
  validate,
  visit,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { GRAPHQL_CODES } from './graphql-errors';
import { NO_COST_DIRECTIVES, actualCost, estimateCost, type CostDirectives, type CostOptions } from './query-cost';

export interface QueryLimits {
  maxDepth: number;
  /** The cost budget (`GRAPHQL_MAX_COST`): an operation estimated above it is refused. */
  maxCost: number;
  maxAliases: number;
  maxDirectives: number;
  /**
   * Length of a list field whose `@listSize` gives none (`GRAPHQL_DEFAULT_LIST_SIZE`): a user's
   * payments, an order's items, where nothing caps them.
   */
  defaultListSize: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxDepth: 10, maxCost: 10_000, maxAliases: 15, maxDirectives: 50, defaultListSize: 20 };

/**
 * Tokens the parser reads before it gives up with a syntax error. Depth and cost are measured on a
 * parsed document, so this bounds the parse itself: a few thousand nested braces exhaust the
 * parser's stack ("Maximum call stack size exceeded") before any limit applies. 2,000 tokens nest
 * at most ~670 deep, well within the stack, and are ten times the introspection query.
 */
export const MAX_QUERY_TOKENS = 2_000;

/** The request header asking for the operation's cost in the answer's `extensions.cost`. */
export const COST_REPORT_HEADER = 'x-graphql-cost';
export const COST_REPORT_VALUE = 'include';

/** What a refusal and a report say about the cost; `actual` (the answer's own, by the same weights) only in a report. */
export interface CostReport {
  estimated: number;
  actual?: number;
  max: number;
}

/** A refusal by one of the limits; Apollo wraps it in its validation error, whose originalError it stays. */
class QueryLimitError extends GraphQLError {
  constructor(
    message: string,
    readonly cost?: CostReport,
  ) {
    super(message, { extensions: { code: GRAPHQL_CODES.QUERY_TOO_COMPLEX, http: { status: 400 }, ...(cost ? { cost } : {}) } });
  }
}

function limitError(error: unknown): QueryLimitError | undefined {
  if (error instanceof QueryLimitError) return error;
  return error instanceof GraphQLError && error.originalError instanceof QueryLimitError ? error.originalError : undefined;
}

/** QUERY_TOO_COMPLEX when `error` (as formatError receives it) is a limit's refusal, else undefined. */
export function queryLimitCode(error: unknown): string | undefined {
  return limitError(error) ? GRAPHQL_CODES.QUERY_TOO_COMPLEX : undefined;
}

/** The estimate a cost refusal carries, for the client's `extensions.cost`. */
export function queryCostOfRefusal(error: unknown): CostReport | undefined {
  return limitError(error)?.cost;
}

const tooComplex = (estimated: number, limits: QueryLimits) =>
  new QueryLimitError(`Query is too complex: estimated cost ${estimated} exceeds the limit of ${limits.maxCost}`, { estimated, max: limits.maxCost });

const costOptions = (limits: QueryLimits, directives: CostDirectives): CostOptions => ({ directives, defaultListSize: limits.defaultListSize });

/** The cost limit as a validation rule (variables at their defaults). */
function costRule(limits: QueryLimits, directives: CostDirectives): ValidationRule {
  return (context: ValidationContext) => ({
    OperationDefinition(operation) {
      const cost = estimateCost(context.getSchema(), context.getDocument(), operation, costOptions(limits, directives));
      if (cost > limits.maxCost) context.reportError(tooComplex(cost, limits));
    },
  });
}

/** Whether a slicing argument of the document is a variable; kept per document object, which Apollo's document cache reuses. */
const variableSized = new WeakMap<DocumentNode, boolean>();

function hasVariableSizes(document: DocumentNode, directives: CostDirectives): boolean {
  let known = variableSized.get(document);
  if (known === undefined) {
    known = false;
    visit(document, {
      Argument(argument) {
        if (argument.value.kind === Kind.VARIABLE && directives.slicingArguments.has(argument.name.value)) known = true;
      },
    });
    variableSized.set(document, known);
  }
  return known;
}

const wantsReport = (request: { http?: { headers: Map<string, string> } }) => request.http?.headers.get(COST_REPORT_HEADER)?.toLowerCase() === COST_REPORT_VALUE;

/** The estimate kept between the two hooks of a request that asked for it. */
const reports = new WeakMap<object, CostReport>();

function addReport<TContext extends object>(context: GraphQLRequestContextWillSendResponse<TContext>, directives: CostDirectives): void {
  const { request, response, contextValue, schema, document, operation } = context;
  const report = reports.get(contextValue);
  if (!report || !wantsReport(request) || response.body.kind !== 'single') return;
  const result = response.body.singleResult;
  const actual = document && operation ? actualCost(schema, document, operation, directives, result.data) : undefined;
  result.extensions = { ...result.extensions, cost: { estimated: report.estimated, actual, max: report.max } };
}

/** The cost again with the request's variables (documents whose list sizes are variables), and the report when asked. */
function variableCostPlugin<TContext extends object>(limits: QueryLimits, directives: CostDirectives): ApolloServerPlugin<TContext> {
  // One listener for every request: nothing is allocated per request that asks for nothing.
  const listener: GraphQLRequestListener<TContext> = {
    async didResolveOperation({ document, operation, request, schema, contextValue }) {
      const report = wantsReport(request);
      if (!operation || (!report && !hasVariableSizes(document, directives))) return;
      const cost = estimateCost(schema, document, operation, costOptions(limits, directives), request.variables ?? {});
      if (cost > limits.maxCost) throw tooComplex(cost, limits);
      if (report) reports.set(contextValue, { estimated: cost, max: limits.maxCost });
    },
    async willSendResponse(context) {
      addReport(context, directives);
    },
  };
  return { requestDidStart: async () => listener };
}

/** Armor's refusals as ours: the code clients switch on, and without Armor's "Syntax Error: " prefix (they are not). */
const refuse = (context: ValidationContext | null, error: GraphQLError) => context?.reportError(new QueryLimitError(error.message.replace(/^Syntax Error: /, '')));

function armor(limits: QueryLimits): { plugins: ApolloServerPlugin[]; validationRules: ValidationRule[] } {
  const rejection = { onReject: [refuse], propagateOnRejection: false, exposeLimits: true };
  const { plugins, validationRules } = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...rejection },
    maxAliases: { n: limits.maxAliases, ...rejection },
    maxDirectives: { n: limits.maxDirectives, ...rejection },
    blockFieldSuggestion: { enabled: true },
    // Replaced as the module comment says.
    costLimit: { enabled: false },
    maxTokens: { enabled: false },
  }).protect();
  return { plugins, validationRules };
}

/** The validation rules of every limit (cost, depth, aliases, directives). */
export function queryLimitRules(limits: QueryLimits = DEFAULT_QUERY_LIMITS, directives: CostDirectives = NO_COST_DIRECTIVES): ValidationRule[] {
  return queryLimits(limits, directives).validationRules;
}

/** What to spread into the ApolloServer options of the gateway and of every subgraph. */
export function queryLimits<TContext extends object>(
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  directives: CostDirectives = NO_COST_DIRECTIVES,
): { validationRules: ValidationRule[]; plugins: ApolloServerPlugin<TContext>[]; parseOptions: { maxTokens: number } } {
  const { plugins, validationRules } = armor(limits);
  return {
    validationRules: [costRule(limits, directives), ...validationRules],
    plugins: [...(plugins as ApolloServerPlugin<TContext>[]), variableCostPlugin<TContext>(limits, directives)],
    parseOptions: { maxTokens: MAX_QUERY_TOKENS },
  };
}

/** Each operation of a valid document that a limit refuses, with the refusal (the schema check of stored operations). */
export function operationLimitProblems(
  schema: GraphQLSchema,
  document: DocumentNode,
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  directives: CostDirectives = NO_COST_DIRECTIVES,
): { operation: string | undefined; message: string }[] {
  const fragments = document.definitions.filter((definition): definition is DefinitionNode & FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION);
  const rules = queryLimitRules(limits, directives);
  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return [];
    const single: DocumentNode = { kind: Kind.DOCUMENT, definitions: [definition, ...fragments] };
    return validate(schema, single, rules).map((error) => ({ operation: definition.name?.value, message: error.message }));
  });
}
