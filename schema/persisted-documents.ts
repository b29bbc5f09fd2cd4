/**
 * The trusted documents manifest (CONTRACT §11): every admin UI operation as the exact text the UI
 * would send, under the sha256 hex of that text, in Apollo's persisted query manifest format (which
 * The Guild's clients and gateways read as well). It is generated beside the admin UI's typed
 * documents by GraphQL Code Generator (schema/codegen.ts): this plugin runs the typed-document-node
 * plugin with the same settings and reads the documents out of its output, so a body here is, byte
 * for byte, the string `graphql()` in the admin UI holds, and an id is what the UI sends instead.
 */
import type { PluginFunction } from '@graphql-codegen/plugin-helpers';
import * as typedDocumentNode from '@graphql-codegen/typed-document-node';
import type { TypeScriptTypedDocumentNodesConfig } from '@graphql-codegen/typed-document-node/typings/config';
import { GraphQLError, Kind, parse, validate, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { operationLimitProblems } from '../platform/query-limits';
import type { CostDirectives } from '../platform/query-cost';
import { documentId, type PersistedManifest } from '../gateway/trusted-documents';

export type { PersistedManifest } from '../gateway/trusted-documents';

export const PERSISTED_DOCUMENTS_FILE = 'gateway/admin/src/api/generated/persisted-documents.json';

/** An operation document of typed-document-node's string mode: `export const XDocument = new TypedDocumentString(`…`)`. */
const DOCUMENT_STRING = /^export const \w+Document = new TypedDocumentString\(`((?:[^`\\]|\\.)*)`/gm;

/** A template literal's text as JavaScript reads it (the generator escapes only these). */
const cooked = (raw: string) => raw.replace(/\\([`\\$])/g, '$1');

function operationOf(body: string): OperationDefinitionNode {
  const operation = parse(body).definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  if (!operation?.name) throw new Error(`An admin UI operation without a name: ${body.trim().slice(0, 60)}`);
  return operation;
}

/** The manifest of the operation documents in typed-document-node's output, by name. */
export function manifestOf(typedDocuments: string): PersistedManifest {
  const operations = [...typedDocuments.matchAll(DOCUMENT_STRING)].map(([, raw]) => {
    const body = cooked(raw);
    const operation = operationOf(body);
    return { id: documentId(body), name: operation.name?.value ?? '', type: operation.operation, body };
  });
  operations.sort((a, b) => a.name.localeCompare(b.name));
  return { format: 'apollo-persisted-query-manifest', version: 1, operations };
}

/** The codegen plugin writing the manifest (its settings are typed-document-node's). */
export const plugin: PluginFunction<TypeScriptTypedDocumentNodesConfig> = async (schema, documents, config, info) => {
  const output = await typedDocumentNode.plugin(schema, documents, config, info);
  const content = typeof output === 'string' ? output : output.content;
  return `${JSON.stringify(manifestOf(content), null, 2)}\n`;
};

/**
 * What `schema:check` finds wrong in a manifest: an id that is not its body's hash, a name used
 * twice, a body that does not parse, validate against the API schema or stay within the limits.
 */
export function manifestProblems(manifest: PersistedManifest, apiSchema: GraphQLSchema, directives: CostDirectives): string[] {
  const problems: string[] = [];
  if (manifest.format !== 'apollo-persisted-query-manifest' || manifest.version !== 1) problems.push('not an apollo-persisted-query-manifest of version 1');
  const names = new Set<string>();
  for (const operation of manifest.operations ?? []) {
    const label = `${operation.name} (${operation.id})`;
    if (operation.id !== documentId(operation.body)) problems.push(`${label}: the id is not the sha256 of the body`);
    if (names.has(operation.name)) problems.push(`${label}: the name is used twice`);
    names.add(operation.name);
    try {
      const document = parse(operation.body);
      const errors = validate(apiSchema, document);
      problems.push(...errors.map((error) => `${label}: ${error.message}`));
      if (errors.length === 0) problems.push(...operationLimitProblems(apiSchema, document, undefined, directives).map(({ message }) => `${label}: ${message}`));
    } catch (error) {
      problems.push(`${label}: ${error instanceof GraphQLError ? error.message : String(error)}`);
    }
  }
  return problems;
}
