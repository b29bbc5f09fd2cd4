/**
 * The subscription fields the gateway answers itself, read from the supergraph: each carries
 * `@fromEvents(topics, query)` (declared by the subgraph that owns the data), and a subscriber's
 * selection on it is run as the Query field `query` with the same arguments, under the
 * subscription field's response key, so its answer has the subscription's shape.
 */
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  isEqualType,
  print,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

export interface LiveField {
  /** The Subscription field, e.g. `paymentUpdated`. */
  name: string;
  /** The Query field whose answer it is, e.g. `payment`. */
  query: string;
  topics: string[];
  /** Its arguments' names: an event concerns a subscriber when its payload has the same values under them. */
  args: string[];
}

/** Each `Subscription` field of the supergraph with `@fromEvents`, checked against its Query field in the API schema. */
export function liveFieldsOf(supergraph: DocumentNode, apiSchema: GraphQLSchema): Map<string, LiveField> {
  const fields = new Map<string, LiveField>();
  for (const definition of supergraph.definitions) {
    if ((definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) || definition.name.value !== 'Subscription') continue;
    for (const field of definition.fields ?? []) {
      const directive = field.directives?.find((d) => d.name.value === 'fromEvents');
      if (!directive) continue;
      const argument = (name: string) => directive.arguments?.find((arg) => arg.name.value === name)?.value;
      const query = argument('query');
      const topics = argument('topics');
      const live: LiveField = {
        name: field.name.value,
        query: query ? String(valueFromASTUntyped(query)) : '',
        topics: topics ? (valueFromASTUntyped(topics) as string[]) : [],
        args: (field.arguments ?? []).map((arg) => arg.name.value),
      };
      checkAgainstQuery(live, apiSchema);
      fields.set(live.name, live);
    }
  }
  return fields;
}

/** A live field must be answerable by its query field: same arguments and type, else the gateway does not start. */
function checkAgainstQuery(live: LiveField, schema: GraphQLSchema): void {
  const subscription = schema.getSubscriptionType()?.getFields()[live.name];
  const query = schema.getQueryType()?.getFields()[live.query];
  const problem = !subscription
    ? 'is not in the API schema'
    : !query
      ? `names Query.${live.query}, which does not exist`
      : !isEqualType(subscription.type, query.type)
        ? `is of type ${String(subscription.type)} but Query.${live.query} of ${String(query.type)}`
        : subscription.args.length !== query.args.length ||
            subscription.args.some((arg) => !query.args.some((other) => other.name === arg.name && isEqualType(other.type, arg.type)))
          ? `does not take the arguments of Query.${live.query}`
          : undefined;
  if (problem) throw new Error(`Subscription.${live.name} (@fromEvents) ${problem}`);
}

/** A subscription request made ready to run as a query. */
export interface LiveRequest {
  field: LiveField;
  /** The query to run: the subscriber's document with its operation turned into a query of `field.query`. */
  query: string;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  /** The response key the answer sits under (the field's alias, else its name). */
  responseKey: string;
  /** The field's argument values, lowercased text, in the order of `field.args`. */
  argValues: string[];
}

const refusal = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });

/**
 * The subscriber's validated `document` as a query of the live field's Query field, or the error a
 * client made: an operation that is not a subscription, a root field that is not live, or one
 * written through a fragment.
 */
export function toLiveRequest(
  schema: GraphQLSchema,
  fields: ReadonlyMap<string, LiveField>,
  document: DocumentNode,
  operationName: string | undefined,
  inputs: Record<string, unknown> | undefined,
): LiveRequest | GraphQLError {
  const operation = getOperationAST(document, operationName);
  if (!operation) return refusal(operationName ? `Unknown operation named "${operationName}".` : 'Must provide an operation, and its name if the document contains several.');
  if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
    return refusal('Only subscriptions are answered as an event stream; send queries and mutations as application/json.');
  }
  const [root] = operation.selectionSet.selections;
  if (operation.selectionSet.selections.length !== 1 || root.kind !== Kind.FIELD) return refusal("A subscription's root field must be written as a field, not through a fragment.");
  const field = fields.get(root.name.value);
  if (!field) return refusal(`Subscription.${root.name.value} is not served by this gateway.`);
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], inputs ?? {}, { maxErrors: 10 });
  if (variables.errors) return variables.errors[0];
  const definition = schema.getSubscriptionType()?.getFields()[field.name] as GraphQLField<unknown, unknown>;
  let args: Record<string, unknown>;
  try {
    args = getArgumentValues(definition, root, variables.coerced);
  } catch (error) {
    return error instanceof GraphQLError ? error : refusal(String(error));
  }
  const responseKey = root.alias?.value ?? root.name.value;
  const asQuery: FieldNode = { ...root, name: { kind: Kind.NAME, value: field.query }, alias: { kind: Kind.NAME, value: responseKey } };
  const queryOperation: OperationDefinitionNode = { ...operation, operation: OperationTypeNode.QUERY, selectionSet: { ...operation.selectionSet, selections: [asQuery] } };
  const queryDocument: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [queryOperation, ...document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)],
  };
  return {
    field,
    query: print(queryDocument),
    operationName: operation.name?.value,
    variables: inputs ?? {},
    responseKey,
    argValues: field.args.map((name) => String(args[name]).toLowerCase()),
  };
}

/** The argument values an event's payload carries for `field` (undefined when it lacks one: it concerns no subscriber). */
export function eventArgValues(field: LiveField, payload: Record<string, unknown>): string[] | undefined {
  const values: string[] = [];
  for (const name of field.args) {
    const value = payload[name];
    if (typeof value !== 'string' || value === '') return undefined;
    values.push(value.toLowerCase());
  }
  return values;
}
