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
 * - The cost is our own rule: Armor's cost limit gives every object and scalar a fixed weight and
 *   cannot multiply by list sizes. Here a list field multiplies what is selected under it by its
 *   `limit`/`first` argument, or its schema default, or an assumed size (20). It is a validation
 *   rule as well; a size given as a variable counts there as the variable's default (else the
 *   field's), and for the few documents that have one (known once per document) a plugin measures
 *   again with the request's variables before anything runs. A subgraph's `_entities` counts as many
 *   times as it has representations written in the document, and once when they come as a variable
 *   (as the gateway sends them): the gateway's own estimate already multiplied each entity by the
 *   lists above it, so its fetches are never refused, and a direct caller pays for every entity
 *   with the bytes of its representation.
 *
 * Introspection: `__schema` is exempt from the depth limit (its shape is bounded by the schema, and
 * graphql-js's own MaxIntrospectionDepthRule, part of the standard rules, refuses the cyclic
 * `fields { type { fields ... } }` nesting); `__` fields cost nothing. Aliases and tokens still apply.
 *
 * Every refusal is a 400 with `extensions.code` QUERY_TOO_COMPLEX (see `queryLimitCode`).
 */
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  validate,
  valueFromASTUntyped,
  visit,
  type DefinitionNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import { GRAPHQL_CODES } from './graphql-errors';

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxDirectives: number;
  /** Assumed length of a list field without a size argument or default (a user's payments, an order's items: nothing caps them). */
  assumedListSize: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxDepth: 10, maxCost: 10_000, maxAliases: 15, maxDirectives: 50, assumedListSize: 20 };

/**
 * Tokens the parser reads before it gives up with a syntax error. Depth and cost are measured on a
 * parsed document, so this bounds the parse itself: a few thousand nested braces exhaust the
 * parser's stack ("Maximum call stack size exceeded") before any limit applies. 2,000 tokens nest
 * at most ~670 deep, well within the stack, and are ten times the introspection query.
 */
export const MAX_QUERY_TOKENS = 2_000;

/** A refusal by one of the limits; Apollo wraps it in its validation error, whose originalError it stays. */
class QueryLimitError extends GraphQLError {
  constructor(message: string) {
    super(message, { extensions: { code: GRAPHQL_CODES.QUERY_TOO_COMPLEX, http: { status: 400 } } });
  }
}

/** QUERY_TOO_COMPLEX when `error` (as formatError receives it) is a limit's refusal, else undefined. */
export function queryLimitCode(error: unknown): string | undefined {
  if (error instanceof QueryLimitError) return GRAPHQL_CODES.QUERY_TOO_COMPLEX;
  return error instanceof GraphQLError && error.originalError instanceof QueryLimitError ? GRAPHQL_CODES.QUERY_TOO_COMPLEX : undefined;
}

const SIZE_ARGUMENTS = ['limit', 'first'];

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  /** The request's variables, over the operation's defaults; a variable without either is absent. */
  variables: Map<string, unknown>;
  limits: QueryLimits;
}

function fieldDefinition(parent: GraphQLNamedType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  return parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
}

function sizeOf(walk: Walk, value: ValueNode): unknown {
  return value.kind === Kind.VARIABLE ? walk.variables.get(value.name.value) : valueFromASTUntyped(value);
}

/** How many times a field's selection repeats: 1 for a non-list, else the list's expected length. */
function multiplier(walk: Walk, node: FieldNode, definition: GraphQLField<unknown, unknown> | undefined): number {
  if (!definition || !isListType(getNullableType(definition.type))) return 1;
  if (node.name.value === '_entities') {
    const representations = node.arguments?.find((arg) => arg.name.value === 'representations')?.value;
    return representations?.kind === Kind.LIST ? representations.values.length : 1;
  }
  for (const name of SIZE_ARGUMENTS) {
    const argument = node.arguments?.find((arg) => arg.name.value === name);
    const value = argument ? sizeOf(walk, argument.value) : definition.args.find((arg) => arg.name === name)?.defaultValue;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  }
  return walk.limits.assumedListSize;
}

function costOf(walk: Walk, selectionSet: SelectionSetNode, parent: GraphQLNamedType | undefined, visiting: Set<string>): number {
  let cost = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name.startsWith('__')) continue; // __typename is free; __schema and __type are introspection
      const definition = fieldDefinition(parent, name);
      const inner = selection.selectionSet ? costOf(walk, selection.selectionSet, definition ? getNamedType(definition.type) : undefined, visiting) : 0;
      cost += 1 + multiplier(walk, selection, definition) * inner;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent;
      cost += costOf(walk, selection.selectionSet, condition ?? undefined, visiting);
    } else {
      const fragment = walk.fragments.get(selection.name.value);
      // A fragment cycle is refused by the standard rules; it adds nothing here.
      if (!fragment || visiting.has(fragment.name.value)) continue;
      visiting.add(fragment.name.value);
      cost += costOf(walk, fragment.selectionSet, walk.schema.getType(fragment.typeCondition.name.value) ?? undefined, visiting);
      visiting.delete(fragment.name.value);
    }
  }
  return cost;
}

function rootType(schema: GraphQLSchema, operation: OperationDefinitionNode): GraphQLNamedType | undefined {
  return schema.getRootType(operation.operation) ?? undefined;
}

/** The estimated cost of one operation of a document (fragments expanded), with the request's variables when known. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  requestVariables: Record<string, unknown> = {},
): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const variables = new Map<string, unknown>();
  for (const variable of operation.variableDefinitions ?? []) {
    const name = variable.variable.name.value;
    const value = requestVariables[name] ?? (variable.defaultValue ? valueFromASTUntyped(variable.defaultValue) : undefined);
    if (value !== undefined) variables.set(name, value);
  }
  return costOf({ schema, fragments, variables, limits }, operation.selectionSet, rootType(schema, operation), new Set());
}

const tooComplex = (cost: number, limits: QueryLimits) => new QueryLimitError(`Query is too complex: estimated cost ${cost} exceeds the limit of ${limits.maxCost}`);

/** The list-size-aware cost limit as a validation rule (variables at their defaults). */
function costRule(limits: QueryLimits): ValidationRule {
  return (context: ValidationContext) => ({
    OperationDefinition(operation) {
      const cost = operationCost(context.getSchema(), context.getDocument(), operation, limits);
      if (cost > limits.maxCost) context.reportError(tooComplex(cost, limits));
    },
  });
}

/** Whether a size argument of the document is a variable; kept per document object, which Apollo's document cache reuses. */
const variableSized = new WeakMap<DocumentNode, boolean>();

function hasVariableSizes(document: DocumentNode): boolean {
  let known = variableSized.get(document);
  if (known === undefined) {
    known = false;
    visit(document, {
      Argument(argument) {
        if (SIZE_ARGUMENTS.includes(argument.name.value) && argument.value.kind === Kind.VARIABLE) known = true;
      },
    });
    variableSized.set(document, known);
  }
  return known;
}

/** The cost again with the request's variables, for documents whose list sizes are variables. */
function variableCostPlugin<TContext extends object>(limits: QueryLimits): ApolloServerPlugin<TContext> {
  // One listener for every request: nothing is allocated per request.
  const listener: GraphQLRequestListener<TContext> = {
    async didResolveOperation({ document, operation, request, schema }) {
      if (!operation || !hasVariableSizes(document)) return;
      const cost = operationCost(schema, document, operation, limits, request.variables ?? {});
      if (cost > limits.maxCost) throw tooComplex(cost, limits);
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
export function queryLimitRules(limits: QueryLimits = DEFAULT_QUERY_LIMITS): ValidationRule[] {
  return queryLimits(limits).validationRules;
}

/** What to spread into the ApolloServer options of the gateway and of every subgraph. */
export function queryLimits<TContext extends object>(
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
): { validationRules: ValidationRule[]; plugins: ApolloServerPlugin<TContext>[]; parseOptions: { maxTokens: number } } {
  const { plugins, validationRules } = armor(limits);
  return {
    validationRules: [costRule(limits), ...validationRules],
    plugins: [...(plugins as ApolloServerPlugin<TContext>[]), variableCostPlugin<TContext>(limits)],
    parseOptions: { maxTokens: MAX_QUERY_TOKENS },
  };
}

/** Each operation of a valid document that a limit refuses, with the refusal (the schema check of stored operations). */
export function operationLimitProblems(
  schema: GraphQLSchema,
  document: DocumentNode,
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
): { operation: string | undefined; message: string }[] {
  const fragments = document.definitions.filter((definition): definition is DefinitionNode & FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION);
  const rules = queryLimitRules(limits);
  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return [];
    const single: DocumentNode = { kind: Kind.DOCUMENT, definitions: [definition, ...fragments] };
    return validate(schema, single, rules).map((error) => ({ operation: definition.name?.value, message: error.message }));
  });
}
