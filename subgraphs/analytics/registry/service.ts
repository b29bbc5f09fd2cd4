/**
 * The schema registry's behaviour (CONTRACT §13), shared by the REST routes, the GraphQL fields and
 * the internal routes: an admin reads the versions and the field usage, the gateway and
 * `npm run schema:publish` record, and `npm run schema:check` reads the usage export.
 */
import type { Database } from '../../../platform/database';
import { assertRole, type Principal } from '../../../platform/auth';
import { notFound } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import {
  usageHourOf,
  type SchemaVersionDetailDto,
  type SchemaVersionDto,
  type SchemaVersionReportDto,
  type UsageExportDto,
  type UsageReportDto,
} from '../../../platform/contracts/schema-registry';
import { ADMIN_ONLY } from '../service';
import { schemaFieldsOf, type CoordinateKind } from './schema-fields';
import { UsageStore } from './usage';
import { SchemaVersions } from './versions';

/** The longest window a read may ask for: the retention's default. */
export const MAX_WINDOW_DAYS = 90;
const HOUR_MS = 3600_000;

export interface FieldUsageItem {
  coordinate: string;
  kind: CoordinateKind;
  deprecated: boolean;
  deprecationReason: string | null;
  requests: number;
  lastUsedAt: string | null;
  clients: { name: string; version: string; requests: number }[];
}

export interface FieldUsageReport {
  days: number;
  since: string;
  /** The version whose coordinates are listed: the one published, served or recorded last. */
  version: SchemaVersionDto | null;
  totalFields: number;
  /** Every coordinate: deprecated ones still in use first (most used first), then by use, then by name. */
  fields: FieldUsageItem[];
}

/** A page of a report's fields (REST's `limit`/`offset`, GraphQL's arguments of `fields`). */
export const fieldsPage = (fields: FieldUsageItem[], page: { limit: number; offset: number }) => fields.slice(page.offset, page.offset + page.limit);

const rank = (item: FieldUsageItem) => (item.deprecated && item.requests > 0 ? 0 : 1);

export class RegistryService {
  readonly usage: UsageStore;
  readonly versions: SchemaVersions;

  constructor(
    db: Database,
    private readonly logger: Logger,
    retentionDays: number,
  ) {
    this.usage = new UsageStore(db, retentionDays);
    this.versions = new SchemaVersions(db);
  }

  async report(report: UsageReportDto): Promise<{ counts: number }> {
    return this.usage.ingest(report);
  }

  async record(report: SchemaVersionReportDto): Promise<{ version: SchemaVersionDto; created: boolean }> {
    const recorded = await this.versions.record(report);
    if (recorded.created) this.logger.info({ versionId: recorded.version.id, source: report.source, commit: report.commit }, 'schema version recorded');
    return recorded;
  }

  async listVersions(principal: Principal, limit: number): Promise<SchemaVersionDto[]> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    return this.versions.list(limit);
  }

  async version(principal: Principal, id: string): Promise<SchemaVersionDetailDto> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const version = await this.versions.get(id);
    if (!version) throw notFound(`Schema version not found: ${id}`, 'SCHEMA_VERSION_NOT_FOUND');
    return version;
  }

  /** The version production runs (internal: `schema:check` against what is served). */
  async servedVersion(): Promise<SchemaVersionDetailDto> {
    const version = await this.versions.served();
    if (!version) throw notFound('No schema version has been published or served yet', 'SCHEMA_VERSION_NOT_FOUND');
    return version;
  }

  async servedVersionFor(principal: Principal): Promise<SchemaVersionDetailDto> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    return this.servedVersion();
  }

  /** The last `days` days of usage, hour by hour (the current hour included). */
  async export(days: number, now = Date.now()): Promise<UsageExportDto> {
    return this.usage.export(UsageStore.windowStart(days, now), usageHourOf(now + HOUR_MS));
  }

  async exportFor(principal: Principal, days: number): Promise<UsageExportDto> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    return this.export(days);
  }

  /** Each coordinate of the latest version with its usage over the last `days` days and its clients. */
  async fieldUsage(principal: Principal, days: number, now = Date.now()): Promise<FieldUsageReport> {
    assertRole(principal, 'ADMIN', ADMIN_ONLY);
    const since = UsageStore.windowStart(days, now);
    const [latest, usage] = await Promise.all([this.versions.latest(), this.usage.coordinateUsage(since)]);
    if (!latest) return { days, since, version: null, totalFields: 0, fields: [] };
    const { supergraphSdl, subgraphSdls: _sdls, ...version } = latest;
    const items = schemaFieldsOf(version.supergraphHash, supergraphSdl).map((field): FieldUsageItem => {
      const used = usage.get(field.coordinate);
      return {
        coordinate: field.coordinate,
        kind: field.kind,
        deprecated: field.deprecationReason !== null,
        deprecationReason: field.deprecationReason,
        requests: used?.requests ?? 0,
        lastUsedAt: used?.lastHour ?? null,
        clients: used?.clients ?? [],
      };
    });
    items.sort((a, b) => rank(a) - rank(b) || b.requests - a.requests || (a.coordinate < b.coordinate ? -1 : 1));
    return { days, since, version, totalFields: items.length, fields: items };
  }
}
