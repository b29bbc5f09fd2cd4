/**
 * `npm run schema:check`: a schema registry's checks without a registry. Fails when a subgraph no
 * longer composes, when the committed supergraph (or a subgraph copy) is stale, when the gateway
 * cannot load it, when the client-facing API schema breaks against the base version without an
 * acknowledgement, when an admin UI operation no longer validates, when the trusted documents manifest
 * holds a document the supergraph refuses, or when a generated file (resolver types, the admin UI's typed
 * documents and its manifest: schema/codegen.ts) differs from what the schemas generate.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ApolloGateway } from '@apollo/gateway';
import {
  findBreakingChanges,
  findDangerousChanges,
  GraphQLError,
  Kind,
  parse,
  validate,
  visit,
  type ASTNode,
  type BreakingChange,
  type DangerousChange,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
} from 'graphql';
import { loadSchemaCheckConfig } from '../platform/config';
import { costDirectivesOf, type CostDirectives } from '../platform/query-cost';
import { operationLimitProblems } from '../platform/query-limits';
import { generatedFiles, generatedStaleness } from './codegen';
import { manifestProblems, PERSISTED_DOCUMENTS_FILE, type PersistedManifest } from './persisted-documents';
import { apiSchemaOf, composeSubgraphs, projectRoot, readSubgraphs, SUBGRAPH_COPIES_DIR, SUPERGRAPH_FILE, type Composition, type SubgraphSdl } from './compose';

export const ACKNOWLEDGED_FILE = 'schema/acknowledged-breaking-changes.json';
export const OPERATIONS_DIR = 'gateway/admin/operations';
/** Beside the operations: the fragments they share, sent with each operation that spreads them. */
export const FRAGMENTS_FILE = 'fragments.graphql';

export interface Acknowledgement {
  type: string;
  description: string;
  reason: string;
}

const normalise = (text: string) => `${text.replace(/\r\n/g, '\n').trimEnd()}\n`;

/** (b) The committed supergraph and subgraph copies, compared with a fresh composition. */
export function stalenessProblems(root: string, composition: Extract<Composition, { ok: true }>): string[] {
  const problems: string[] = [];
  const read = (file: string) => (fs.existsSync(path.join(root, file)) ? fs.readFileSync(path.join(root, file), 'utf8') : undefined);
  const committed = read(SUPERGRAPH_FILE);
  if (committed === undefined) problems.push(`${SUPERGRAPH_FILE} is missing`);
  else if (normalise(committed) !== normalise(composition.supergraphSdl)) problems.push(`${SUPERGRAPH_FILE} is stale: it differs from what the subgraphs compose to`);
  for (const subgraph of composition.subgraphs) {
    const copy = read(`${SUBGRAPH_COPIES_DIR}/${subgraph.name}.graphql`);
    if (copy === undefined || normalise(copy) !== normalise(subgraph.sdl))
      problems.push(`${SUBGRAPH_COPIES_DIR}/${subgraph.name}.graphql is stale or missing (copy of ${subgraph.file})`);
  }
  return problems.length > 0 ? [...problems, 'Run `npm run schema:compose` and commit the result.'] : [];
}

/** (c) Loads the supergraph into @apollo/gateway once: catches features only the Router supports. */
export async function gatewayLoadProblems(supergraphSdl: string): Promise<string[]> {
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const gateway = new ApolloGateway({ supergraphSdl, logger: quiet });
  try {
    await gateway.load();
    return [];
  } catch (error) {
    return [`@apollo/gateway cannot load the supergraph: ${error instanceof Error ? error.message : String(error)}`];
  } finally {
    await gateway.stop().catch(() => undefined);
  }
}

export function readAcknowledged(root: string): Acknowledgement[] {
  const file = path.join(root, ACKNOWLEDGED_FILE);
  if (!fs.existsSync(file)) return [];
  const entries: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const valid = (entry: unknown): entry is Acknowledgement => {
    const e = entry as Partial<Acknowledgement> | null;
    return typeof e?.type === 'string' && typeof e.description === 'string' && typeof e.reason === 'string' && e.reason.trim() !== '';
  };
  if (!Array.isArray(entries) || !entries.every(valid)) {
    throw new Error(`${ACKNOWLEDGED_FILE} must be an array of { "type", "description", "reason" } with a non-empty reason`);
  }
  return entries;
}

export interface BreakingReport {
  unacknowledged: BreakingChange[];
  acknowledged: (BreakingChange & { reason: string })[];
  dangerous: DangerousChange[];
}

/** (d) Breaking and dangerous changes of the API schema from `baseSdl` to `newSdl`. */
export function breakingChanges(baseSdl: string, newSdl: string, acknowledgements: Acknowledgement[]): BreakingReport {
  const before = apiSchemaOf(baseSdl);
  const after = apiSchemaOf(newSdl);
  const report: BreakingReport = { unacknowledged: [], acknowledged: [], dangerous: findDangerousChanges(before, after) };
  for (const change of findBreakingChanges(before, after)) {
    const ack = acknowledgements.find((a) => a.type === String(change.type) && a.description === change.description);
    if (ack) report.acknowledged.push({ ...change, reason: ack.reason });
    else report.unacknowledged.push(change);
  }
  return report;
}

function git(root: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return undefined;
  }
}

export interface BaseSchema {
  sdl: string | undefined;
  /** Where the base came from, or why there is none. */
  label: string;
}

/**
 * The supergraph to diff against: the one at `baseRef` when given (e.g. origin/main in a pull
 * request), else the newest committed version that differs from the working tree's, which is HEAD's
 * for an uncommitted change and the previous version on a fresh clone of main. None on the first version.
 */
export function baseSupergraph(root: string, baseRef: string | undefined): BaseSchema {
  if (baseRef) {
    if (git(root, ['rev-parse', '--verify', '--quiet', `${baseRef}^{commit}`]) === undefined) throw new Error(`SCHEMA_BASE_REF ${baseRef} is not a commit in this repository`);
    const sdl = git(root, ['show', `${baseRef}:${SUPERGRAPH_FILE}`]);
    return sdl === undefined ? { sdl: undefined, label: `${baseRef} has no ${SUPERGRAPH_FILE}` } : { sdl, label: baseRef };
  }
  const log = git(root, ['log', '--format=%H', '--', SUPERGRAPH_FILE]);
  if (log === undefined) return { sdl: undefined, label: 'no git history here' };
  const current = fs.existsSync(path.join(root, SUPERGRAPH_FILE)) ? normalise(fs.readFileSync(path.join(root, SUPERGRAPH_FILE), 'utf8')) : '';
  for (const commit of log.split('\n').filter(Boolean)) {
    const sdl = git(root, ['show', `${commit}:${SUPERGRAPH_FILE}`]);
    if (sdl !== undefined && normalise(sdl) !== current) return { sdl, label: `commit ${commit.slice(0, 12)}` };
  }
  return { sdl: undefined, label: `no earlier version of ${SUPERGRAPH_FILE} in the history` };
}

function graphqlFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return graphqlFiles(full);
    return entry.isFile() && entry.name.endsWith('.graphql') ? [full] : [];
  });
}

/** The shared fragments' definitions (fragments.graphql, beside the operations), by name. */
function sharedFragments(file: string): Map<string, FragmentDefinitionNode> {
  if (!fs.existsSync(file)) return new Map();
  const definitions = parse(fs.readFileSync(file, 'utf8')).definitions;
  return new Map(definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
}

/** The shared fragments `node` spreads, directly or through one another: what the UI sends with an operation. */
function spreadFragments(node: ASTNode, shared: Map<string, FragmentDefinitionNode>, used = new Map<string, FragmentDefinitionNode>()): Map<string, FragmentDefinitionNode> {
  visit(node, {
    FragmentSpread(spread) {
      const definition = shared.get(spread.name.value);
      if (!definition || used.has(definition.name.value)) return;
      used.set(definition.name.value, definition);
      spreadFragments(definition, shared, used);
    },
  });
  return used;
}

/**
 * (e) Every stored admin UI operation, with the shared fragments it spreads (FRAGMENTS_FILE), parses,
 * validates against the API schema and is within the gateway's limits; every shared fragment is used.
 */
export function operationProblems(root: string, apiSchema: GraphQLSchema, dir: string = OPERATIONS_DIR, directives?: CostDirectives): { files: number; problems: string[] } {
  const files = graphqlFiles(path.join(root, dir)).sort();
  const fragmentsFile = path.join(root, dir, FRAGMENTS_FILE);
  const problems: string[] = [];
  let shared: Map<string, FragmentDefinitionNode>;
  try {
    shared = sharedFragments(fragmentsFile);
  } catch (error) {
    return { files: files.length, problems: [`${path.relative(root, fragmentsFile)}: ${error instanceof GraphQLError ? error.message : String(error)}`] };
  }
  const unused = new Set(shared.keys());
  for (const file of files) {
    if (file === fragmentsFile) continue;
    const name = path.relative(root, file);
    let document: DocumentNode;
    try {
      document = parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      problems.push(`${name}: ${error instanceof GraphQLError ? error.message : String(error)}`);
      continue;
    }
    const fragments = spreadFragments(document, shared);
    for (const fragment of fragments.keys()) unused.delete(fragment);
    document = { ...document, definitions: [...document.definitions, ...fragments.values()] };
    const errors = validate(apiSchema, document);
    problems.push(...errors.map((error) => `${name}: ${error.message}`));
    if (errors.length > 0) continue;
    for (const { operation, message } of operationLimitProblems(apiSchema, document, undefined, directives))
      problems.push(`${name}: ${operation ?? 'anonymous operation'}: ${message}`);
  }
  for (const fragment of unused) problems.push(`${path.relative(root, fragmentsFile)}: fragment ${fragment} is spread by no operation`);
  return { files: files.length, problems };
}

/** (f) The committed trusted documents manifest: each document validates against the API schema and stays within the limits. */
export function trustedDocumentProblems(root: string, apiSchema: GraphQLSchema, directives: CostDirectives): { documents: number; problems: string[] } {
  let manifest: PersistedManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(root, PERSISTED_DOCUMENTS_FILE), 'utf8')) as PersistedManifest;
  } catch (error) {
    return { documents: 0, problems: [`${PERSISTED_DOCUMENTS_FILE}: ${error instanceof Error ? error.message : String(error)}`] };
  }
  return { documents: manifest.operations?.length ?? 0, problems: manifestProblems(manifest, apiSchema, directives) };
}

/** (g) The committed generated type files, compared with what the subgraphs and the fresh supergraph generate. */
export async function generatedTypesProblems(root: string, composition: Extract<Composition, { ok: true }>): Promise<{ files: number; problems: string[] }> {
  try {
    const files = await generatedFiles({ root, subgraphs: composition.subgraphs, supergraphSdl: composition.supergraphSdl });
    return { files: files.length, problems: generatedStaleness(root, files) };
  } catch (error) {
    return { files: 0, problems: [`GraphQL Code Generator failed: ${error instanceof Error ? error.message : String(error)}`] };
  }
}

export interface CheckResult {
  ok: boolean;
  /** Human-readable lines; failures start with "FAIL". */
  lines: string[];
}

export async function runSchemaChecks(root: string, options: { baseRef?: string; subgraphs?: SubgraphSdl[] } = {}): Promise<CheckResult> {
  const lines: string[] = [];
  let ok = true;
  const fail = (title: string, problems: string[]) => {
    ok = false;
    lines.push(`FAIL ${title}`, ...problems.map((problem) => `  ${problem}`));
  };

  const composition = composeSubgraphs(options.subgraphs ?? readSubgraphs(root));
  if (!composition.ok) {
    fail('composition', composition.errors);
    return { ok, lines };
  }
  lines.push(`ok   composition (${composition.subgraphs.map((s) => s.name).join(', ')})`, ...composition.hints.map((hint) => `  hint ${hint}`));

  const stale = stalenessProblems(root, composition);
  if (stale.length > 0) fail('committed supergraph is up to date', stale);
  else lines.push(`ok   ${SUPERGRAPH_FILE} is up to date`);

  const load = await gatewayLoadProblems(composition.supergraphSdl);
  if (load.length > 0) fail('gateway loads the supergraph', load);
  else lines.push('ok   @apollo/gateway loads the supergraph');

  const base = baseSupergraph(root, options.baseRef);
  if (base.sdl === undefined) {
    lines.push(`ok   breaking changes: nothing to compare with (${base.label})`);
  } else {
    const report = breakingChanges(base.sdl, composition.supergraphSdl, readAcknowledged(root));
    const describe = (change: { type: string; description: string }) => `${change.type}: ${change.description}`;
    if (report.unacknowledged.length > 0) {
      fail(`breaking changes against ${base.label}`, [
        ...report.unacknowledged.map(describe),
        `Acknowledge each in ${ACKNOWLEDGED_FILE} as { "type", "description", "reason" } if clients are ready for it.`,
      ]);
    } else {
      lines.push(`ok   no unacknowledged breaking change against ${base.label}`);
    }
    lines.push(...report.acknowledged.map((change) => `  acknowledged ${describe(change)} (${change.reason})`));
    lines.push(...report.dangerous.map((change) => `  dangerous ${describe(change)}`));
  }

  const apiSchema = apiSchemaOf(composition.supergraphSdl);
  const directives = costDirectivesOf(parse(composition.supergraphSdl));
  const operations = operationProblems(root, apiSchema, OPERATIONS_DIR, directives);
  if (operations.problems.length > 0) fail(`admin UI operations validate (${OPERATIONS_DIR})`, operations.problems);
  else lines.push(`ok   ${operations.files} admin UI operation file(s) validate`);

  const manifest = trustedDocumentProblems(root, apiSchema, directives);
  if (manifest.problems.length > 0) fail(`trusted documents validate (${PERSISTED_DOCUMENTS_FILE})`, manifest.problems);
  else lines.push(`ok   ${manifest.documents} trusted document(s) validate against the supergraph`);

  const generated = await generatedTypesProblems(root, composition);
  if (generated.problems.length > 0) fail('generated types are up to date', generated.problems);
  else lines.push(`ok   ${generated.files} generated type file(s) are up to date`);

  return { ok, lines };
}

async function main(): Promise<void> {
  const { baseRef } = loadSchemaCheckConfig();
  const result = await runSchemaChecks(projectRoot(), { baseRef });
  process.stdout.write(`${result.lines.join('\n')}\n`);
  if (!result.ok) {
    process.stderr.write('schema check failed\n');
    process.exit(1);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`schema check failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
