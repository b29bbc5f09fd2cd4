/**
 * `npm run schema:check`: a schema registry's checks. Fails when a subgraph no longer composes, when
 * the committed supergraph (or a subgraph copy) is stale, when the gateway cannot load it, when a
 * breaking or dangerous change of the client-facing API schema against the base version fails its
 * usage-aware judgement (schema/changes.ts: by the field usage the registry keeps, CONTRACT §13), when
 * an admin UI operation no longer validates, when the trusted documents manifest holds a document the
 * supergraph refuses, when a list a client sizes has no `@listSize` (or a slicing
 * argument no default), or when a generated file (resolver types, the admin UI's typed documents and
 * its manifest: schema/codegen.ts) differs from what the schemas generate. `--json` prints the
 * result for CI tools instead of the report.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ApolloGateway } from '@apollo/gateway';
import { GraphQLError, Kind, parse, validate, visit, type ASTNode, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema } from 'graphql';
import { loadSchemaCheckConfig, type SchemaCheckSettings } from '../platform/config';
import { coordinatesOf } from '../gateway/usage-coordinates';
import { sizingProblems } from '../platform/list-sizes';
import { costDirectivesOf, type CostDirectives } from '../platform/query-cost';
import { operationLimitProblems } from '../platform/query-limits';
import { generatedFiles, generatedStaleness } from './codegen';
import { manifestProblems, PERSISTED_DOCUMENTS_FILE, type PersistedManifest } from './persisted-documents';
import { apiSchemaOf, composeSubgraphs, projectRoot, readSubgraphs, SUBGRAPH_COPIES_DIR, SUPERGRAPH_FILE, type Composition, type SubgraphSdl } from './compose';
import { acknowledgementProblems, judgeChanges, readAcknowledged, schemaChanges, ACKNOWLEDGED_FILE, type JudgedChange, type ProtectedDocument } from './changes';
import { loadUsage, servedVersion, type UsageSource } from './registry-client';

export { ACKNOWLEDGED_FILE } from './changes';
export const OPERATIONS_DIR = 'gateway/admin/operations';
/** Beside the operations: the fragments they share, sent with each operation that spreads them. */
export const FRAGMENTS_FILE = 'fragments.graphql';

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

/** The .graphql files under `dir`, at any depth, in path order. */
function graphqlFiles(dir: string): string[] {
  return fs
    .globSync('**/*.graphql', { cwd: dir })
    .map((file) => path.join(dir, file))
    .sort();
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
  const files = graphqlFiles(path.join(root, dir));
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

/**
 * What the system itself sends, with the coordinates each touches in `schema` (the base's: a document
 * may use what the change takes away): the trusted documents manifest and the admin UI's operation
 * files. A change that concerns one of them always fails (schema/changes.ts).
 */
export function protectedDocuments(root: string, schema: GraphQLSchema, dir: string = OPERATIONS_DIR): ProtectedDocument[] {
  const documents: ProtectedDocument[] = [];
  const parsed = (text: string) => {
    try {
      return parse(text);
    } catch {
      return undefined; // reported by the operation and manifest checks
    }
  };
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, PERSISTED_DOCUMENTS_FILE), 'utf8')) as PersistedManifest;
    for (const operation of manifest.operations ?? []) {
      const document = parsed(operation.body);
      if (document) documents.push({ label: `trusted document ${operation.name} (${operation.id.slice(0, 12)})`, coordinates: coordinatesOf(schema, document, operation.name) });
    }
  } catch {
    // A manifest that cannot be read fails its own check.
  }
  const fragmentsFile = path.join(root, dir, FRAGMENTS_FILE);
  let shared: Map<string, FragmentDefinitionNode>;
  try {
    shared = sharedFragments(fragmentsFile);
  } catch {
    shared = new Map();
  }
  for (const file of graphqlFiles(path.join(root, dir))) {
    if (file === fragmentsFile) continue;
    const document = parsed(fs.readFileSync(file, 'utf8'));
    if (!document) continue;
    const whole = { ...document, definitions: [...document.definitions, ...spreadFragments(document, shared).values()] };
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      const name = definition.name?.value;
      documents.push({ label: `admin UI operation ${name ?? 'anonymous'} (${path.relative(root, file)})`, coordinates: coordinatesOf(schema, whole, name) });
    }
  }
  return documents;
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
  /** The breaking and dangerous changes against the base, each judged (empty without a base). */
  changes: JudgedChange[];
  /** What the changes were compared with, and the usage they were judged by. */
  base: string;
  usage: { source: string; windowDays: number; threshold: number; excludedClients: string[]; noUsageReason: string };
}

/** The usage-aware settings (platform/config/registry.ts); a test gives its own. */
export type ChangeSettings = Pick<SchemaCheckSettings, 'registry' | 'usageFile' | 'windowDays' | 'threshold' | 'excludedClients' | 'allowNoUsage' | 'base'>;

export const NO_REGISTRY: ChangeSettings = {
  registry: { url: undefined, token: undefined, internalApiKey: undefined },
  usageFile: undefined,
  windowDays: 7,
  threshold: 1,
  excludedClients: [],
  allowNoUsage: false,
  base: 'git',
};

export interface CheckOptions {
  baseRef?: string;
  subgraphs?: SubgraphSdl[];
  settings?: ChangeSettings;
  /** Today, for the window and the acknowledgements' dates. */
  now?: Date;
}

const describeChange = (change: JudgedChange) => `${change.criticality} ${change.type} ${change.path ?? '(schema)'}: ${change.message}`;

/** (d) The judged changes, grouped by verdict: what fails first, then what passes and why. */
function changeLines(changes: JudgedChange[]): string[] {
  const lines: string[] = [];
  for (const [verdict, title] of [
    ['fail', 'failing'],
    ['pass', 'passing'],
  ] as const) {
    const group = changes.filter((change) => change.verdict === verdict);
    if (group.length === 0) continue;
    lines.push(`  ${title} (${group.length}):`);
    for (const change of group) lines.push(`    ${describeChange(change)}`, `      ${change.reason}`);
  }
  return lines;
}

export async function runSchemaChecks(root: string, options: CheckOptions = {}): Promise<CheckResult> {
  const settings = options.settings ?? NO_REGISTRY;
  const now = options.now ?? new Date();
  const lines: string[] = [];
  let ok = true;
  const fail = (title: string, problems: string[]) => {
    ok = false;
    lines.push(`FAIL ${title}`, ...problems.map((problem) => `  ${problem}`));
  };
  let changes: JudgedChange[] = [];
  let usage: UsageSource = { usage: undefined, source: 'none', noUsageReason: 'not read' };
  let baseLabel = 'none';
  const result = (): CheckResult => ({
    ok,
    lines,
    changes,
    base: baseLabel,
    usage: { source: usage.source, windowDays: settings.windowDays, threshold: settings.threshold, excludedClients: settings.excludedClients, noUsageReason: usage.noUsageReason },
  });

  const composition = composeSubgraphs(options.subgraphs ?? readSubgraphs(root));
  if (!composition.ok) {
    fail('composition', composition.errors);
    return result();
  }
  lines.push(`ok   composition (${composition.subgraphs.map((s) => s.name).join(', ')})`, ...composition.hints.map((hint) => `  hint ${hint}`));

  const stale = stalenessProblems(root, composition);
  if (stale.length > 0) fail('committed supergraph is up to date', stale);
  else lines.push(`ok   ${SUPERGRAPH_FILE} is up to date`);

  const load = await gatewayLoadProblems(composition.supergraphSdl);
  if (load.length > 0) fail('gateway loads the supergraph', load);
  else lines.push('ok   @apollo/gateway loads the supergraph');

  let base: BaseSchema;
  if (settings.base === 'published') {
    const served = await servedVersion(settings.registry);
    base = { sdl: served.supergraphSdl, label: `the version production runs (${served.id}${served.commit ? `, commit ${served.commit.slice(0, 12)}` : ''})` };
  } else {
    base = baseSupergraph(root, options.baseRef);
  }
  baseLabel = base.label;
  const acknowledgements = readAcknowledged(root);
  const ackProblems = acknowledgementProblems(acknowledgements, now);
  if (ackProblems.length > 0) fail(`acknowledgements (${ACKNOWLEDGED_FILE})`, ackProblems);
  if (base.sdl === undefined) {
    lines.push(`ok   breaking changes: nothing to compare with (${base.label})`);
  } else {
    const found = await schemaChanges(base.sdl, composition.supergraphSdl);
    if (found.length > 0) usage = await loadUsage(settings, root);
    changes = judgeChanges(found, {
      usage: usage.usage,
      noUsageReason: usage.noUsageReason,
      windowDays: settings.windowDays,
      threshold: settings.threshold,
      excludedClients: settings.excludedClients,
      allowNoUsage: settings.allowNoUsage,
      acknowledgements,
      protectedDocuments: found.length > 0 ? protectedDocuments(root, apiSchemaOf(base.sdl)) : [],
      now,
    });
    const failing = changes.filter((change) => change.verdict === 'fail').length;
    const judgedBy = usage.usage ? `; usage of the last ${settings.windowDays} days from the ${usage.source}` : '';
    const summary = `breaking and dangerous changes against ${base.label} (${failing} failing, ${changes.length - failing} passing${judgedBy})`;
    if (changes.length === 0) lines.push(`ok   no breaking or dangerous change against ${base.label}`);
    else if (failing > 0)
      fail(
        summary,
        changeLines(changes).map((line) => line.slice(2)),
      );
    else lines.push(`ok   ${summary}`, ...changeLines(changes));
  }

  const apiSchema = apiSchemaOf(composition.supergraphSdl);
  const directives = costDirectivesOf(parse(composition.supergraphSdl));
  const operations = operationProblems(root, apiSchema, OPERATIONS_DIR, directives);
  if (operations.problems.length > 0) fail(`admin UI operations validate (${OPERATIONS_DIR})`, operations.problems);
  else lines.push(`ok   ${operations.files} admin UI operation file(s) validate`);

  const sizing = sizingProblems(apiSchema, directives);
  if (sizing.length > 0) fail('every list a client sizes has @listSize (platform/list-sizes.ts)', sizing);
  else lines.push('ok   every list a client sizes has @listSize naming its slicing arguments, each with a default');

  const manifest = trustedDocumentProblems(root, apiSchema, directives);
  if (manifest.problems.length > 0) fail(`trusted documents validate (${PERSISTED_DOCUMENTS_FILE})`, manifest.problems);
  else lines.push(`ok   ${manifest.documents} trusted document(s) validate against the supergraph`);

  const generated = await generatedTypesProblems(root, composition);
  if (generated.problems.length > 0) fail('generated types are up to date', generated.problems);
  else lines.push(`ok   ${generated.files} generated type file(s) are up to date`);

  return result();
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const { baseRef, ...settings } = loadSchemaCheckConfig();
  const result = await runSchemaChecks(projectRoot(), { baseRef, settings });
  if (json) process.stdout.write(`${JSON.stringify({ ok: result.ok, base: result.base, usage: result.usage, changes: result.changes, report: result.lines }, null, 2)}\n`);
  else process.stdout.write(`${result.lines.join('\n')}\n`);
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
