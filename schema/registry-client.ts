/**
 * How the schema tools reach the schema registry (CONTRACT §13): the analytics service's internal
 * routes with the internal key, or its admin routes with an ADMIN token (directly, or through the
 * gateway, which routes /analytics but never /analytics/internal). `npm run schema:check` reads the
 * usage export from it (or from a file holding one) and the version production runs;
 * `npm run schema:publish` records a version.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { RegistryAccess, SchemaCheckSettings } from '../platform/config';
import { INTERNAL_KEY_HEADER } from '../platform/auth';
import type { SchemaVersionDetailDto, SchemaVersionDto, SchemaVersionReportDto, UsageExportDto } from '../platform/contracts/schema-registry';

const TIMEOUT_MS = 30_000;

/** A registry route: `/analytics/internal/schema/<route>` with the key, `/analytics/schema/<route>` with a token. */
async function call<T>(registry: RegistryAccess, route: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  if (!registry.url) throw new Error('SCHEMA_REGISTRY_URL is not set');
  const viaToken = registry.token !== undefined;
  if (!viaToken && registry.internalApiKey === undefined) throw new Error('INTERNAL_API_KEY or SCHEMA_REGISTRY_TOKEN must be set to reach the registry');
  const url = `${registry.url}/analytics/${viaToken ? '' : 'internal/'}schema/${route}`;
  const headers: Record<string, string> = viaToken ? { authorization: `Bearer ${registry.token}` } : { [INTERNAL_KEY_HEADER]: registry.internalApiKey ?? '' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return { status: res.status, body: JSON.parse(text) as T };
}

export interface UsageSource {
  /** The usage of the window; undefined when there is none to judge by. */
  usage: UsageExportDto | undefined;
  /** Where it came from, for the report. */
  source: string;
  /** Why there is none, when there is none. */
  noUsageReason: string;
}

const isExport = (value: unknown): value is UsageExportDto => {
  const v = value as Partial<UsageExportDto> | null;
  return typeof v?.since === 'string' && typeof v.until === 'string' && Array.isArray(v.operations) && Array.isArray(v.counts);
};

/**
 * The usage to judge changes by: the file `SCHEMA_USAGE_FILE` names, else the registry's export of
 * the window. A source that cannot be read, or that holds no operation at all, is no usage data.
 */
export async function loadUsage(settings: Pick<SchemaCheckSettings, 'usageFile' | 'registry' | 'windowDays'>, root: string): Promise<UsageSource> {
  let usage: UsageExportDto;
  let source: string;
  try {
    if (settings.usageFile) {
      source = `file ${settings.usageFile}`;
      const parsed: unknown = JSON.parse(fs.readFileSync(path.resolve(root, settings.usageFile), 'utf8'));
      if (!isExport(parsed)) return { usage: undefined, source, noUsageReason: `${settings.usageFile} is not a usage export ({ since, until, operations, counts })` };
      usage = parsed;
    } else if (settings.registry.url) {
      source = `registry ${settings.registry.url}`;
      usage = (await call<UsageExportDto>(settings.registry, `usage-export?days=${settings.windowDays}`)).body;
    } else {
      return { usage: undefined, source: 'none', noUsageReason: 'no usage source: set SCHEMA_REGISTRY_URL or SCHEMA_USAGE_FILE' };
    }
  } catch (error) {
    return {
      usage: undefined,
      source: settings.usageFile ? `file ${settings.usageFile}` : `registry ${settings.registry.url}`,
      noUsageReason: `usage could not be read: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (usage.counts.length === 0) return { usage: undefined, source, noUsageReason: `the ${source} holds no operation` };
  return { usage, source, noUsageReason: '' };
}

/** The version production runs: the one a gateway started on last (else the one published last). */
export async function servedVersion(registry: RegistryAccess): Promise<SchemaVersionDetailDto> {
  return (await call<SchemaVersionDetailDto>(registry, 'versions/served')).body;
}

/** Records a version; answers it and whether the registry had not seen its supergraph before. */
export async function publishVersion(registry: RegistryAccess, report: SchemaVersionReportDto): Promise<{ version: SchemaVersionDto; created: boolean }> {
  const { status, body } = await call<SchemaVersionDto>({ ...registry, token: undefined }, 'versions', { method: 'POST', body: report });
  return { version: body, created: status === 201 };
}
