/**
 * The schema coordinates an operation touches (CONTRACT §13), as the gateway reports them and
 * `npm run schema:check` reads the admin UI's operations: each type it reaches (`Book`), field
 * (`Book.title`), argument (`Query.books.limit`), input field (`RefundInput.amount`) and enum value
 * (`OrderStatus.SHIPPED`). A value given in the document counts exactly; one given in a variable may
 * be anything its type allows, so a variable counts every input field and enum value its type holds.
 * Introspection and directives count nothing.
 */
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  Kind,
  TypeInfo,
  typeFromAST,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

const introspection = (name: string) => name.startsWith('__');

/** The fragments `root` spreads, directly or through one another. */
function reachableFragments(root: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const reached = new Map<string, FragmentDefinitionNode>();
  const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [root];
  for (let node = pending.pop(); node; node = pending.pop()) {
    visit(node, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !reached.has(fragment.name.value)) {
          reached.set(fragment.name.value, fragment);
          pending.push(fragment);
        }
      },
    });
  }
  return [...reached.values()];
}

/** Every input field and enum value a variable of this type may hold, nested input types included. */
function addEverythingOf(type: GraphQLNamedType, out: Set<string>, seen = new Set<string>()): void {
  if (seen.has(type.name)) return;
  seen.add(type.name);
  out.add(type.name);
  if (isEnumType(type)) {
    for (const value of type.getValues()) out.add(`${type.name}.${value.name}`);
  } else if (isInputObjectType(type)) {
    for (const field of Object.values(type.getFields())) {
      out.add(`${type.name}.${field.name}`);
      addEverythingOf(getNamedType(field.type), out, seen);
    }
  }
}

/**
 * The coordinates of the operation `operationName` picks in `document` (the only one when it names
 * none), sorted; empty when the document has no such operation. The document is assumed valid
 * against `schema`: what the schema does not know is left out.
 */
export function coordinatesOf(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): string[] {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((op) => op.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation) return [];
  const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));

  const out = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  const add = (coordinate: string) => {
    if (!introspection(coordinate)) out.add(coordinate);
  };
  const visitor = visitWithTypeInfo(typeInfo, {
    OperationDefinition(node) {
      const root = schema.getRootType(node.operation);
      if (root) add(root.name);
    },
    VariableDefinition(node) {
      const type = typeFromAST(schema, node.type);
      if (type) addEverythingOf(getNamedType(type), out);
    },
    Field(node) {
      const parent = typeInfo.getParentType();
      const field = typeInfo.getFieldDef();
      if (!parent || !field || introspection(node.name.value)) return;
      add(`${parent.name}.${field.name}`);
      add(getNamedType(field.type).name);
    },
    Argument(node) {
      if (typeInfo.getDirective()) return;
      const parent = typeInfo.getParentType();
      const field = typeInfo.getFieldDef();
      const argument = typeInfo.getArgument();
      if (!parent || !field || !argument || introspection(field.name)) return;
      add(`${parent.name}.${field.name}.${node.name.value}`);
      add(getNamedType(argument.type).name);
    },
    ObjectField(node) {
      if (typeInfo.getDirective()) return;
      const parent = typeInfo.getParentInputType();
      const input = parent && getNamedType(parent);
      if (!input || !isInputObjectType(input)) return;
      add(input.name);
      add(`${input.name}.${node.name.value}`);
      const type = typeInfo.getInputType();
      if (type) add(getNamedType(type).name);
    },
    EnumValue(node) {
      if (typeInfo.getDirective()) return;
      const type = typeInfo.getInputType();
      const named = type && getNamedType(type);
      if (named && isEnumType(named)) add(`${named.name}.${node.value}`);
    },
    InlineFragment(node) {
      if (node.typeCondition) add(node.typeCondition.name.value);
    },
    FragmentDefinition(node) {
      add(node.typeCondition.name.value);
    },
  });
  visit(operation, visitor);
  for (const fragment of reachableFragments(operation, fragments)) visit(fragment, visitor);
  return [...out].sort();
}
