/**
 * `npm run schema:compose`: composes every subgraph's schema.graphql with @apollo/composition (the
 * same code the gateway and Rover use), writes the committed `schema/supergraph.graphql` and a copy
 * of each subgraph SDL as composed under `schema/subgraphs/`. Fails on any composition error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { composeServices } from '@apollo/composition';
import { Supergraph } from '@apollo/federation-internals';
import { GraphQLError, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { DEFAULT_PORTS, type ServiceName } from '../platform/config';

export interface SubgraphSource {
  name: ServiceName;
  /** Relative to the project root. */
  file: string;
  /** The routing URL baked into the supergraph; the gateway swaps in config.urls at request time. */
  url: string;
}

const source = (name: ServiceName): SubgraphSource => ({
  name,
  file: `subgraphs/${name}/schema.graphql`,
  url: `http://127.0.0.1:${DEFAULT_PORTS[name]}/graphql`,
});

/** Every subgraph in the supergraph: one per service. */
export const SUBGRAPHS: readonly SubgraphSource[] = [source('user'), source('book'), source('order'), source('payment'), source('analytics'), source('auth')];

export const SUPERGRAPH_FILE = 'schema/supergraph.graphql';
export const SUBGRAPH_COPIES_DIR = 'schema/subgraphs';

export interface SubgraphSdl {
  name: string;
  url: string;
  file: string;
  sdl: string;
}

export type Composition = { ok: true; supergraphSdl: string; hints: string[]; subgraphs: SubgraphSdl[] } | { ok: false; errors: string[]; subgraphs: SubgraphSdl[] };

/** The project root: the nearest folder above this file holding package.json (works from dist too). */
export function projectRoot(from: string = __dirname): string {
  let dir = path.resolve(from);
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${from}`);
    dir = parent;
  }
  return dir;
}

export function readSubgraphs(root: string, table: readonly SubgraphSource[] = SUBGRAPHS): SubgraphSdl[] {
  return table.map((entry) => ({ name: entry.name, url: entry.url, file: entry.file, sdl: fs.readFileSync(path.join(root, entry.file), 'utf8') }));
}

/** Composes SDL texts; a syntax error in one subgraph is reported with its file, like a composition error. */
export function composeSubgraphs(subgraphs: SubgraphSdl[]): Composition {
  const errors: string[] = [];
  const services: { name: string; url: string; typeDefs: DocumentNode }[] = [];
  for (const subgraph of subgraphs) {
    try {
      services.push({ name: subgraph.name, url: subgraph.url, typeDefs: parse(subgraph.sdl) });
    } catch (error) {
      const message = error instanceof GraphQLError ? error.message : String(error);
      errors.push(`[${subgraph.name}] ${subgraph.file}: ${message}`);
    }
  }
  if (errors.length > 0) return { ok: false, errors, subgraphs };
  const result = composeServices(services);
  if (result.errors) {
    return {
      ok: false,
      errors: result.errors.map((error) => `${typeof error.extensions?.code === 'string' ? error.extensions.code : 'COMPOSITION_ERROR'}: ${error.message}`),
      subgraphs,
    };
  }
  const hints = result.hints.map((hint) => `${hint.definition.code}: ${hint.message}`);
  return { ok: true, supergraphSdl: `${result.supergraphSdl.trimEnd()}\n`, hints, subgraphs };
}

/** What clients see: the supergraph without federation machinery or @inaccessible parts. */
export function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
}

/** Writes the supergraph and the subgraph copies; answers the files written, relative to the root. */
export function writeComposition(root: string, composition: Extract<Composition, { ok: true }>): string[] {
  fs.writeFileSync(path.join(root, SUPERGRAPH_FILE), composition.supergraphSdl);
  const copies = path.join(root, SUBGRAPH_COPIES_DIR);
  fs.mkdirSync(copies, { recursive: true });
  const wanted = new Set(composition.subgraphs.map((subgraph) => `${subgraph.name}.graphql`));
  // A subgraph removed from the table loses its copy too.
  for (const file of fs.readdirSync(copies)) {
    if (file.endsWith('.graphql') && !wanted.has(file)) fs.rmSync(path.join(copies, file));
  }
  for (const subgraph of composition.subgraphs) fs.writeFileSync(path.join(copies, `${subgraph.name}.graphql`), subgraph.sdl);
  return [SUPERGRAPH_FILE, ...composition.subgraphs.map((subgraph) => `${SUBGRAPH_COPIES_DIR}/${subgraph.name}.graphql`)];
}

function main(): void {
  const root = projectRoot();
  const composition = composeSubgraphs(readSubgraphs(root));
  if (!composition.ok) {
    process.stderr.write(`Composition failed:\n${composition.errors.map((error) => `  ${error}`).join('\n')}\n`);
    process.exit(1);
  }
  for (const hint of composition.hints) process.stdout.write(`hint ${hint}\n`);
  const written = writeComposition(root, composition);
  process.stdout.write(`Composed ${composition.subgraphs.map((s) => s.name).join(', ')}; wrote ${written.join(', ')}\n`);
}

if (require.main === module) main();
