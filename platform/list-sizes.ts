/**
 * The lists a client sizes, held to what the cost estimate says of them (CONTRACT §9): every
 * subgraph's resolvers receive their slicing arguments by the estimate's own rule
 * (`slicingArgument`: null or absent is the schema default), and a schema in which a client could
 * size a list the estimate does not know of is refused.
 */
import { defaultFieldResolver, isInterfaceType, isObjectType, type GraphQLArgument, type GraphQLField, type GraphQLSchema } from 'graphql';
import { slicingArgument, type CostDirectives } from './query-cost';

/** Argument names that size a list, by the usual conventions: a field taking one of them as an Int is sized by its client. */
const SIZING_ARGUMENTS = new Set(['limit', 'first', 'last', 'size', 'top']);

function fieldsOf(schema: GraphQLSchema): { key: string; field: GraphQLField<unknown, unknown> }[] {
  return Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__') && (isObjectType(type) || isInterfaceType(type)))
    .flatMap((type) =>
      Object.values((type as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()).map((field) => ({ key: `${type.name}.${field.name}`, field })),
    );
}

const isIntArgument = (argument: GraphQLArgument) => argument.type.toString() === 'Int' || argument.type.toString() === 'Int!';

/**
 * What is wrong with a schema's sizes, one line each: a field with a sizing argument (an `Int`
 * named limit, first, last, size or top) that its `@listSize` does not name as a slicing argument,
 * and a slicing argument with no default (the estimate and the resolver would each pick their own).
 */
export function sizingProblems(schema: GraphQLSchema, directives: CostDirectives): string[] {
  const problems: string[] = [];
  for (const { key, field } of fieldsOf(schema)) {
    const slicing = directives.listSizes.get(key)?.slicingArguments ?? [];
    for (const argument of field.args) {
      if (SIZING_ARGUMENTS.has(argument.name) && isIntArgument(argument) && !slicing.includes(argument.name)) {
        problems.push(`${key}(${argument.name}) sizes a list: give the field @listSize(slicingArguments: ["${argument.name}"]) (and sizedFields for a page object)`);
      }
    }
    for (const name of slicing) {
      const argument = field.args.find((arg) => arg.name === name);
      if (!argument) problems.push(`${key}: @listSize names a slicing argument ${name} the field does not have`);
      else if (argument.defaultValue === undefined) problems.push(`${key}(${name}) is a slicing argument without a default value`);
    }
  }
  return problems;
}

/**
 * Wraps the resolver of every field with slicing arguments so that it receives each of them as
 * `slicingArgument` reads it; throws with `sizingProblems` when the schema has any, so a subgraph
 * whose sizes the estimate cannot hold does not start.
 */
export function applySlicingRule(schema: GraphQLSchema, directives: CostDirectives): void {
  const problems = sizingProblems(schema, directives);
  if (problems.length > 0) throw new Error(`The schema's list sizes do not hold: ${problems.join('; ')}`);
  for (const { key, field } of fieldsOf(schema)) {
    const slicing = directives.listSizes.get(key)?.slicingArguments ?? [];
    if (slicing.length === 0) continue;
    const definitions = field.args.filter((argument) => slicing.includes(argument.name));
    const resolve = field.resolve ?? defaultFieldResolver;
    field.resolve = (source, args: Record<string, unknown>, context, info) => {
      const sized = { ...args };
      for (const definition of definitions) sized[definition.name] = slicingArgument(args[definition.name], definition);
      return resolve(source, sized, context, info);
    };
  }
}
