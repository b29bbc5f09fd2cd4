/**
 * The coordinates a version of the schema offers its clients: every field, argument, input field and
 * enum value of its API schema (the supergraph without federation's machinery or @inaccessible
 * parts), with its deprecation. The admin's usage page lists them against their usage.
 */
import { Supergraph } from '@apollo/federation-internals';
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';

export type CoordinateKind = 'FIELD' | 'ARGUMENT' | 'INPUT_FIELD' | 'ENUM_VALUE';

export interface SchemaField {
  coordinate: string;
  kind: CoordinateKind;
  deprecationReason: string | null;
}

/** Built schemas by supergraph hash: a version's text never changes. */
const built = new Map<string, SchemaField[]>();
const BUILT_KEPT = 8;

function fieldsOf(schema: GraphQLSchema): SchemaField[] {
  const fields: SchemaField[] = [];
  const entry = (coordinate: string, kind: CoordinateKind, deprecationReason: string | null | undefined) =>
    fields.push({ coordinate, kind, deprecationReason: deprecationReason ?? null });
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        entry(`${type.name}.${field.name}`, 'FIELD', field.deprecationReason);
        for (const arg of field.args) entry(`${type.name}.${field.name}.${arg.name}`, 'ARGUMENT', arg.deprecationReason);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) entry(`${type.name}.${field.name}`, 'INPUT_FIELD', field.deprecationReason);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) entry(`${type.name}.${value.name}`, 'ENUM_VALUE', value.deprecationReason);
    }
  }
  return fields.sort((a, b) => (a.coordinate < b.coordinate ? -1 : 1));
}

export function schemaFieldsOf(supergraphHash: string, supergraphSdl: string): SchemaField[] {
  let fields = built.get(supergraphHash);
  if (!fields) {
    fields = fieldsOf(Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema());
    if (built.size >= BUILT_KEPT) built.clear();
    built.set(supergraphHash, fields);
  }
  return fields;
}
