/**
 * `npm run schema:publish`: records the schema in the registry (CONTRACT §13): the committed
 * supergraph and every subgraph's SDL as composed, with the commit, the time and who published it,
 * so that `npm run schema:check` can compare with what production runs (`SCHEMA_CHECK_BASE=published`)
 * and the admin UI's Schema page lists the versions. It refuses a supergraph that is stale against the
 * subgraphs: what is published is what the gateway will load.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { loadSchemaPublishConfig, type SchemaPublishSettings } from '../platform/config';
import type { SchemaVersionDto } from '../platform/contracts/schema-registry';
import { stalenessProblems } from './check';
import { composeSubgraphs, projectRoot, readSubgraphs } from './compose';
import { publishVersion } from './registry-client';

function git(root: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Who publishes: SCHEMA_PUBLISHED_BY, else git's user.email, else the system's user. */
export function publisherOf(root: string, settings: Pick<SchemaPublishSettings, 'publishedBy'>): string {
  return settings.publishedBy ?? git(root, ['config', 'user.email']) ?? os.userInfo().username;
}

export async function publishSchema(root: string, settings: SchemaPublishSettings): Promise<{ version: SchemaVersionDto; created: boolean }> {
  const composition = composeSubgraphs(readSubgraphs(root));
  if (!composition.ok) throw new Error(`the subgraphs do not compose:\n  ${composition.errors.join('\n  ')}`);
  const stale = stalenessProblems(root, composition);
  if (stale.length > 0) throw new Error(stale.join('\n'));
  return publishVersion(settings.registry, {
    source: 'publish',
    supergraphSdl: composition.supergraphSdl,
    subgraphs: composition.subgraphs.map(({ name, url, sdl }) => ({ name, url, sdl })),
    commit: settings.commit ?? git(root, ['rev-parse', 'HEAD']) ?? null,
    publishedBy: publisherOf(root, settings),
  });
}

async function main(): Promise<void> {
  const { version, created } = await publishSchema(projectRoot(), loadSchemaPublishConfig());
  process.stdout.write(
    `${created ? 'Published a new schema version' : 'Published again the schema version'} ${version.id} (supergraph ${version.supergraphHash.slice(0, 12)}, commit ${version.commit ?? 'unknown'}, by ${version.publishedBy ?? 'unknown'}; subgraphs ${version.subgraphs.join(', ')})\n`,
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`schema publish failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
