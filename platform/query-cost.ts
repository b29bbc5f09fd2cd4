/**
 * Demand control: an operation's estimated cost by the IBM GraphQL cost specification, as Apollo
 * Router and Hive Gateway apply it, from the `@cost` and `@listSize` directives (federation 2.9)
 * of the schema it runs on. The gateway reads them from the supergraph, each subgraph from its own
 * SDL, and both measure with this one function, so a query costs the same at either door.
 *
 * The rule, per field:
 * - the field's weight is its `@cost(weight)`, else its type's `@cost`, else 1 for an object,
 *   interface or union and 0 for a scalar or an enum (`__` fields cost nothing);
 * - a list multiplies the weight plus what is selected under it by its expected length: the largest
 *   of its `@listSize(slicingArguments)` given (as literals, variables or the argument's default),
 *   else its `@listSize(assumedSize)`, else the configured default. `sizedFields` moves that length
 *   to the named fields under it (a connection's `edges`);
 * - an argument with `@cost(weight)` adds its weight when given;
 * - of the fragments on the different object types an abstract field may return, the costliest
 *   counts (an object is one of them; the IBM specification's rule), and a mutation starts at 10.
 *
 * A subgraph's `_entities` counts as many times as it has representations written in the document,
 * and once when they come as a variable (as the gateway sends them): the gateway's own estimate
 * already multiplied each entity by the lists above it, so its fetches are never refused, and a
 * direct caller pays for every entity with the bytes of its representation.
 */
import {
  Kind,
  OperationTypeNode,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  valueFromASTUntyped,
  type ConstDirectiveNode,
  type DefinitionNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** What a field's `@listSize` says (https://specs.apollo.dev/cost/v0.1). */
export interface ListSize {
  assumedSize?: number;
  slicingArguments: string[];
  sizedFields: string[];
}

/** The `@cost` and `@listSize` of a schema, keyed `Type`, `Type.field` and `Type.field.argument`. */
export interface CostDirectives {
  weights: Map<string, number>;
  listSizes: Map<string, ListSize>;
  /** Every slicing argument's name: a document passing one of them as a variable is measured again per request. */
  slicingArguments: Set<string>;
}

/** The base cost of a mutation (Apollo Router's and Hive's). */
export const MUTATION_BASE_COST = 10;

/** `@cost`, `@federation__cost` or an import renamed by its spec prefix (`@cost__cost`) alike. */
const named = (directive: ConstDirectiveNode, name: string) => directive.name.value === name || directive.name.value.endsWith(`__${name}`);

function argumentOf(directive: ConstDirectiveNode, name: string): unknown {
  const argument = directive.arguments?.find((arg) => arg.name.value === name);
  return argument ? valueFromASTUntyped(argument.value) : undefined;
}

/** `weight` is an Int in Apollo's spec and a String in IBM's; both read as a number. */
function weightOf(directives: readonly ConstDirectiveNode[] | undefined): number | undefined {
  const cost = directives?.find((directive) => named(directive, 'cost'));
  const weight = cost ? Number(argumentOf(cost, 'weight')) : NaN;
  return Number.isFinite(weight) ? weight : undefined;
}

const names = (value: unknown): string[] => (Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : []);

function listSizeOf(directives: readonly ConstDirectiveNode[] | undefined): ListSize | undefined {
  const directive = directives?.find((entry) => named(entry, 'listSize'));
  if (!directive) return undefined;
  const assumed = argumentOf(directive, 'assumedSize');
  return {
    assumedSize: typeof assumed === 'number' ? assumed : undefined,
    slicingArguments: names(argumentOf(directive, 'slicingArguments')),
    sizedFields: names(argumentOf(directive, 'sizedFields')),
  };
}

function readField(directives: CostDirectives, type: string, field: FieldDefinitionNode): void {
  const key = `${type}.${field.name.value}`;
  const weight = weightOf(field.directives);
  if (weight !== undefined) directives.weights.set(key, weight);
  const listSize = listSizeOf(field.directives);
  if (listSize) {
    directives.listSizes.set(key, listSize);
    for (const name of listSize.slicingArguments) directives.slicingArguments.add(name);
  }
  for (const argument of field.arguments ?? []) {
    const argumentWeight = weightOf(argument.directives);
    if (argumentWeight !== undefined) directives.weights.set(`${key}.${argument.name.value}`, argumentWeight);
  }
}

/** The cost directives of an SDL document (a supergraph or a subgraph schema), in one pass. */
export function costDirectivesOf(sdl: DocumentNode): CostDirectives {
  const directives: CostDirectives = { weights: new Map(), listSizes: new Map(), slicingArguments: new Set() };
  for (const definition of sdl.definitions) readDefinition(directives, definition);
  return directives;
}

function readDefinition(directives: CostDirectives, definition: DefinitionNode): void {
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION:
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION:
      for (const field of definition.fields ?? []) readField(directives, definition.name.value, field);
      break;
    case Kind.SCALAR_TYPE_DEFINITION:
    case Kind.ENUM_TYPE_DEFINITION:
      break;
    default:
      return;
  }
  const weight = weightOf(definition.directives);
  if (weight !== undefined) directives.weights.set(definition.name.value, weight);
}

export const NO_COST_DIRECTIVES: CostDirectives = { weights: new Map(), listSizes: new Map(), slicingArguments: new Set() };

interface Walk {
  schema: GraphQLSchema;
  directives: CostDirectives;
  fragments: Map<string, FragmentDefinitionNode>;
  /** The request's variables, over the operation's defaults; a variable without either is absent. */
  variables: Map<string, unknown>;
  defaultListSize: number;
}

function fieldDefinition(parent: GraphQLNamedType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  return parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
}

/**
 * The one rule for a slicing argument's value, at both doors (CONTRACT §9): as given, and its schema
 * default when it is not given or given null (a literal `null`, or a variable that is null or not
 * sent). The estimate sizes lists by it, and every subgraph's resolvers receive their slicing
 * arguments by it (`applySlicingRule`), so a list is never longer than it was costed.
 */
export function slicingArgument(given: unknown, definition: Pick<GraphQLArgument, 'defaultValue'> | undefined): unknown {
  return given ?? definition?.defaultValue;
}

/** A slicing argument's value by that rule (literal or variable); only a count is a size. */
function slicingValue(walk: Walk, node: FieldNode, definition: GraphQLField<unknown, unknown>, name: string): number | undefined {
  const argument = node.arguments?.find((arg) => arg.name.value === name);
  let given: unknown;
  if (argument) given = argument.value.kind === Kind.VARIABLE ? walk.variables.get(argument.value.name.value) : valueFromASTUntyped(argument.value);
  const value = slicingArgument(
    given,
    definition.args.find((arg) => arg.name === name),
  );
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** The expected length of a field's list by `@listSize`, or undefined when it says nothing. */
function declaredSize(walk: Walk, node: FieldNode, definition: GraphQLField<unknown, unknown>, listSize: ListSize | undefined): number | undefined {
  if (!listSize) return undefined;
  const given = listSize.slicingArguments.map((name) => slicingValue(walk, node, definition, name)).filter((value): value is number => value !== undefined);
  return given.length > 0 ? Math.max(...given) : listSize.assumedSize;
}

function listLength(walk: Walk, node: FieldNode, definition: GraphQLField<unknown, unknown>, listSize: ListSize | undefined, sized: number | undefined): number {
  if (sized !== undefined) return sized;
  if (node.name.value === '_entities') {
    const representations = node.arguments?.find((arg) => arg.name.value === 'representations')?.value;
    return representations?.kind === Kind.LIST ? representations.values.length : 1;
  }
  return declaredSize(walk, node, definition, listSize) ?? walk.defaultListSize;
}

/** A field's own weight: its `@cost`, else its type's, else 1 for an object, interface or union and 0 for a scalar or an enum. */
function weightOfField(directives: CostDirectives, key: string, type: GraphQLNamedType): number {
  return directives.weights.get(key) ?? directives.weights.get(type.name) ?? (isCompositeType(type) ? 1 : 0);
}

/** What the weighted arguments given to a field add. */
function argumentsCost(directives: CostDirectives, key: string, node: FieldNode): number {
  let cost = 0;
  for (const argument of node.arguments ?? []) cost += directives.weights.get(`${key}.${argument.name.value}`) ?? 0;
  return cost;
}

function fieldCost(walk: Walk, node: FieldNode, parent: GraphQLNamedType, sized: number | undefined): number {
  const definition = fieldDefinition(parent, node.name.value);
  if (!definition) return 0;
  const key = `${parent.name}.${definition.name}`;
  const type = getNamedType(definition.type);
  const listSize = walk.directives.listSizes.get(key);
  const weight = weightOfField(walk.directives, key, type);
  // `sizedFields`: the length belongs to the named fields under this one, not to it.
  const passed = listSize && listSize.sizedFields.length > 0 ? declaredSize(walk, node, definition, listSize) : undefined;
  const inner = node.selectionSet ? selectionCost(walk, node.selectionSet, type, passed === undefined ? undefined : { fields: listSize?.sizedFields ?? [], size: passed }) : 0;
  const isList = isListType(getNullableType(definition.type));
  const count = isList ? listLength(walk, node, definition, passed === undefined ? listSize : undefined, sized) : 1;
  return count * (weight + inner) + argumentsCost(walk.directives, key, node);
}

/**
 * A selection set's cost. An object is one concrete type, so of the fragments on the different
 * object types an abstract field may return only one applies: the costliest counts. Fields and
 * fragments on the parent type itself or on an abstract type all count.
 */
function selectionCost(walk: Walk, selectionSet: SelectionSetNode, parent: GraphQLNamedType, sizing?: { fields: string[]; size: number }, visiting = new Set<string>()): number {
  let common = 0;
  const branches = new Map<string, number>();
  const fragment = (condition: GraphQLNamedType, set: SelectionSetNode) => {
    const cost = selectionCost(walk, set, condition, sizing, visiting);
    if (isObjectType(condition) && condition !== parent) branches.set(condition.name, (branches.get(condition.name) ?? 0) + cost);
    else common += cost;
  };
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue; // __typename is free; __schema and __type are introspection
      const sized = sizing?.fields.includes(selection.name.value) ? sizing.size : undefined;
      common += fieldCost(walk, selection, parent, sized);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent;
      if (condition) fragment(condition, selection.selectionSet);
    } else {
      const spread = walk.fragments.get(selection.name.value);
      // A fragment cycle is refused by the standard rules; it adds nothing here.
      const condition = spread && walk.schema.getType(spread.typeCondition.name.value);
      if (!spread || !condition || visiting.has(spread.name.value)) continue;
      visiting.add(spread.name.value);
      fragment(condition, spread.selectionSet);
      visiting.delete(spread.name.value);
    }
  }
  return common + Math.max(0, ...branches.values());
}

export interface CostOptions {
  directives: CostDirectives;
  /** Length of a list field whose `@listSize` gives none. */
  defaultListSize: number;
}

/** The estimated cost of one operation of a document (fragments expanded), with the request's variables when known. */
function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  return fragments;
}

export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  options: CostOptions,
  requestVariables: Record<string, unknown> = {},
): number {
  const fragments = fragmentsOf(document);
  const variables = new Map<string, unknown>();
  for (const variable of operation.variableDefinitions ?? []) {
    const name = variable.variable.name.value;
    // A variable sent as null is null (its declared default applies only when it is not sent), as GraphQL executes it.
    const value = Object.hasOwn(requestVariables, name) ? requestVariables[name] : variable.defaultValue ? valueFromASTUntyped(variable.defaultValue) : undefined;
    if (value !== undefined) variables.set(name, value);
  }
  const root = schema.getRootType(operation.operation);
  if (!root) return 0;
  const walk: Walk = { schema, directives: options.directives, fragments, variables, defaultListSize: options.defaultListSize };
  return (operation.operation === OperationTypeNode.MUTATION ? MUTATION_BASE_COST : 0) + selectionCost(walk, operation.selectionSet, root);
}

type Answer = Record<string, unknown>;

/**
 * The actual cost of an answer by the same weights: each object, list item and weighted argument
 * the answer holds, so a list counts at its real length and a null counts nothing. An object's
 * concrete type is its `__typename` when selected, else the field's type; fragments on another
 * object type do not apply to it.
 */
export function actualCost(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, directives: CostDirectives, data: unknown): number {
  const root = schema.getRootType(operation.operation);
  if (!root || typeof data !== 'object' || data === null) return 0;
  const fragments = fragmentsOf(document);
  const objectCost = (set: SelectionSetNode, declared: GraphQLNamedType, value: Answer): number => {
    const named = typeof value.__typename === 'string' ? schema.getType(value.__typename) : undefined;
    const concrete = named ?? declared;
    let cost = 0;
    const visit = (selections: SelectionSetNode, parent: GraphQLNamedType) => {
      for (const selection of selections.selections) {
        if (selection.kind === Kind.FIELD) {
          const definition = fieldDefinition(parent, selection.name.value);
          const item = value[selection.alias?.value ?? selection.name.value];
          if (!definition || selection.name.value.startsWith('__') || item === undefined) continue;
          const key = `${parent.name}.${definition.name}`;
          const type = getNamedType(definition.type);
          const one = (entry: unknown): number =>
            entry === null
              ? 0
              : weightOfField(directives, key, type) + (selection.selectionSet && typeof entry === 'object' ? objectCost(selection.selectionSet, type, entry as Answer) : 0);
          cost += (Array.isArray(item) ? item.reduce((sum: number, entry) => sum + one(entry), 0) : one(item)) + argumentsCost(directives, key, selection);
        } else {
          const name = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : fragments.get(selection.name.value)?.typeCondition.name.value;
          const condition = name ? schema.getType(name) : parent;
          const body = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)?.selectionSet;
          if (!condition || !body || (isObjectType(condition) && isObjectType(concrete) && condition !== concrete)) continue;
          visit(body, condition);
        }
      }
    };
    visit(set, concrete);
    return cost;
  };
  return (operation.operation === OperationTypeNode.MUTATION ? MUTATION_BASE_COST : 0) + objectCost(operation.selectionSet, root, data as Answer);
}
