/**
 * Limits on what one GraphQL operation may ask of the gateway: nesting depth, and a cost that grows
 * with list sizes (a list field multiplies what is selected under it by its `limit`/`first`
 * argument, its schema default, or an assumed size). Introspection is exempt: it is bounded by the schema.
 */
import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
  /** Assumed length of a list field without a size argument or default. */
  assumedListSize: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxDepth: 10, maxCost: 10_000, assumedListSize: 10 };

/**
 * Tokens the parser reads before it gives up with a syntax error. Depth and cost are measured on a
 * parsed document, so this bounds the parse itself: a few thousand nested braces exhaust the
 * parser's stack ("Maximum call stack size exceeded") before any limit applies. 2,000 tokens nest
 * at most ~670 deep, well within the stack, and are ten times the introspection query.
 */
export const MAX_QUERY_TOKENS = 2_000;

export const QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

const SIZE_ARGUMENTS = ['limit', 'first'];

export interface OperationMeasure {
  depth: number;
  cost: number;
}

interface Walk {
  schema: GraphQLSchema | undefined;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  limits: QueryLimits;
}

function fieldDefinition(parent: GraphQLNamedType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  return parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
}

/** How many times a field's selection repeats: 1 for a non-list, else the list's expected length. */
function multiplier(walk: Walk, node: FieldNode, definition: GraphQLField<unknown, unknown> | undefined): number {
  if (!definition || !isListType(getNullableType(definition.type))) return 1;
  for (const name of SIZE_ARGUMENTS) {
    const argument = node.arguments?.find((arg) => arg.name.value === name);
    const value = argument ? valueFromASTUntyped(argument.value, walk.variables) : definition.args.find((arg) => arg.name === name)?.defaultValue;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  }
  return walk.limits.assumedListSize;
}

function measureSelections(walk: Walk, selectionSet: SelectionSetNode, parent: GraphQLNamedType | undefined, depth: number): OperationMeasure {
  let cost = 0;
  let deepest = depth;
  for (const selection of selectionSet.selections) {
    let inner: OperationMeasure;
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name.startsWith('__')) continue; // __typename is free; __schema and __type are introspection
      const definition = fieldDefinition(parent, name);
      const child = selection.selectionSet
        ? measureSelections(walk, selection.selectionSet, definition ? getNamedType(definition.type) : undefined, depth + 1)
        : { depth: depth + 1, cost: 0 };
      inner = { depth: child.depth, cost: 1 + multiplier(walk, selection, definition) * child.cost };
    } else {
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : walk.fragments.get(selection.name.value);
      if (!fragment) continue;
      const condition = fragment.typeCondition ? walk.schema?.getType(fragment.typeCondition.name.value) : parent;
      inner = measureSelections(walk, fragment.selectionSet, condition ?? undefined, depth);
    }
    cost += inner.cost;
    deepest = Math.max(deepest, inner.depth);
  }
  return { depth: deepest, cost };
}

function rootType(schema: GraphQLSchema | undefined, operation: OperationDefinitionNode): GraphQLNamedType | undefined {
  if (!schema) return undefined;
  if (operation.operation === 'mutation') return schema.getMutationType() ?? undefined;
  if (operation.operation === 'subscription') return schema.getSubscriptionType() ?? undefined;
  return schema.getQueryType() ?? undefined;
}

/** Depth and cost of one operation of a validated document (fragments expanded). */
export function measureOperation(
  document: DocumentNode,
  options: { schema?: GraphQLSchema; operationName?: string | null; variables?: Record<string, unknown>; limits?: QueryLimits } = {},
): OperationMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
  }
  const operation = options.operationName ? operations.find((op) => op.name?.value === options.operationName) : operations[0];
  if (!operation) return { depth: 0, cost: 0 };
  const walk: Walk = { schema: options.schema, fragments, variables: options.variables ?? {}, limits: options.limits ?? DEFAULT_QUERY_LIMITS };
  return measureSelections(walk, operation.selectionSet, rootType(options.schema, operation), 0);
}

/** The error to answer when an operation is over a limit, or undefined when it is within them. */
export function limitViolation(measure: OperationMeasure, limits: QueryLimits = DEFAULT_QUERY_LIMITS): GraphQLError | undefined {
  const problem =
    measure.depth > limits.maxDepth
      ? `Query is too deep: depth ${measure.depth} exceeds the limit of ${limits.maxDepth}`
      : measure.cost > limits.maxCost
        ? `Query is too complex: estimated cost ${measure.cost} exceeds the limit of ${limits.maxCost}`
        : undefined;
  return problem ? new GraphQLError(problem, { extensions: { code: QUERY_TOO_COMPLEX, http: { status: 400 } } }) : undefined;
}
