/**
 * Field usage as the gateway reports it (CONTRACT §13): each report adds, in one transaction, its
 * operations with their coordinates (once per operation) and its hourly counts (additive upserts in
 * key order, so two replicas taking reports of the same hour never lose a count). Usage older than
 * the retention is deleted, and so are operations no usage names any more.
 */
import type { EntityManager } from 'typeorm';
import type { Database } from '../../../platform/database';
import { usageHourOf, type UsageCountDto, type UsageExportDto, type UsageOperationDto, type UsageReportDto } from '../../../platform/contracts/schema-registry';
import { validationFailed } from '../../../platform/errors';
import { upsert } from '../ingest';

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
/** Operations whose coordinates this process knows are stored, before the memory starts again. */
const KNOWN_OPERATIONS = 10_000;
/** Operations per statement when reading their coordinates. */
const CHUNK = 500;

const HOURLY_COLUMNS = ['hour', 'operation_hash', 'operation_name', 'client_name', 'client_version', 'count'];

const operationKey = (op: { hash: string; name: string }) => `${op.hash}\n${op.name}`;

/** What one coordinate's usage in a window comes to, by client. */
export interface CoordinateUsage {
  requests: number;
  lastHour: string;
  clients: { name: string; version: string; requests: number }[];
}

interface HourlyRow {
  hour: string;
  operation_hash: string;
  operation_name: string;
  client_name: string;
  client_version: string;
  count: string | number;
}

export class UsageStore {
  private readonly known = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly retentionDays: number,
  ) {}

  /** The first hour a window of `days` ending now holds. */
  static windowStart(days: number, now = Date.now()): string {
    return usageHourOf(now - days * DAY_MS);
  }

  /**
   * Adds a report's counts. Every count must name an operation the report describes (400 otherwise);
   * counts older than the retention are left out, as pruning would delete them.
   */
  async ingest(report: UsageReportDto, now = Date.now()): Promise<{ counts: number }> {
    const described = new Map(report.operations.map((op) => [operationKey(op), op]));
    const problems = report.counts.flatMap((count, i) => (described.has(operationKey(count)) ? [] : [`counts[${i}]: names an operation the report does not describe`]));
    if (problems.length > 0) throw validationFailed(problems.slice(0, 20));

    const oldest = UsageStore.windowStart(this.retentionDays, now);
    const counts = new Map<string, UsageCountDto>();
    for (const count of report.counts) {
      if (count.hour < oldest) continue;
      const key = `${count.hour}\n${count.hash}\n${count.name}\n${count.client}\n${count.version}`;
      const same = counts.get(key);
      if (same) same.count += count.count;
      else counts.set(key, { ...count });
    }
    const rows = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => [c.hour, c.hash, c.name, c.client, c.version, c.count]);
    const fresh = [...new Set([...counts.values()].map(operationKey))].filter((key) => !this.known.has(key)).map((key) => described.get(key) as UsageOperationDto);
    fresh.sort((a, b) => (operationKey(a) < operationKey(b) ? -1 : 1));

    await this.db.transaction(async (manager) => {
      await this.storeOperations(manager, fresh);
      await upsert(manager, this.db.kind, 'registry_usage_hourly', 'hour, operation_hash, operation_name, client_name, client_version', HOURLY_COLUMNS, rows, {
        added: ['count'],
      });
    });
    if (this.known.size + fresh.length > KNOWN_OPERATIONS) this.known.clear();
    for (const op of fresh) this.known.add(operationKey(op));
    return { counts: rows.length };
  }

  private async storeOperations(manager: EntityManager, operations: UsageOperationDto[]): Promise<void> {
    if (operations.length === 0) return;
    await upsert(
      manager,
      this.db.kind,
      'registry_usage_operations',
      'operation_hash, operation_name',
      ['operation_hash', 'operation_name', 'operation_type'],
      operations.map((op) => [op.hash, op.name, op.type]),
      {},
    );
    const coordinates = operations.flatMap((op) => [...new Set(op.coordinates)].sort().map((coordinate) => [op.hash, op.name, coordinate]));
    await upsert(
      manager,
      this.db.kind,
      'registry_usage_coordinates',
      'operation_hash, operation_name, coordinate',
      ['operation_hash', 'operation_name', 'coordinate'],
      coordinates,
      {},
    );
  }

  /** Deletes usage older than the retention, then the operations no usage names; answers the hourly rows deleted. */
  async prune(now = Date.now()): Promise<number> {
    const oldest = UsageStore.windowStart(this.retentionDays, now);
    const deleted = await this.db.transaction(async (manager) => {
      const [{ n }] = await manager.query<{ n: string | number }[]>('SELECT COUNT(*) AS n FROM registry_usage_hourly WHERE hour < ?', [oldest]);
      await manager.query('DELETE FROM registry_usage_hourly WHERE hour < ?', [oldest]);
      const unused = 'NOT EXISTS (SELECT 1 FROM registry_usage_hourly h WHERE h.operation_hash = {t}.operation_hash AND h.operation_name = {t}.operation_name)';
      // MySQL refuses an alias on the table a DELETE names in its own subquery: the table's name qualifies it.
      await manager.query(`DELETE FROM registry_usage_coordinates WHERE ${unused.replace(/\{t\}/g, 'registry_usage_coordinates')}`);
      await manager.query(`DELETE FROM registry_usage_operations WHERE ${unused.replace(/\{t\}/g, 'registry_usage_operations')}`);
      return Number(n);
    });
    this.known.clear();
    return deleted;
  }

  /** The usage of the hours from `since` up to `until` (exclusive), with each operation it names. */
  async export(since: string, until: string): Promise<UsageExportDto> {
    const rows = await this.db.manager.query<HourlyRow[]>(
      `SELECT ${HOURLY_COLUMNS.join(', ')} FROM registry_usage_hourly WHERE hour >= ? AND hour < ? ORDER BY hour, operation_hash, operation_name, client_name, client_version`,
      [since, until],
    );
    const counts = rows.map((row) => ({
      hour: row.hour,
      hash: row.operation_hash,
      name: row.operation_name,
      client: row.client_name,
      version: row.client_version,
      count: Number(row.count),
    }));
    return { since, until, operations: await this.operations([...new Set(counts.map(operationKey))]), counts };
  }

  private async operations(keys: string[]): Promise<UsageOperationDto[]> {
    const operations = new Map<string, UsageOperationDto>();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const part = keys.slice(i, i + CHUNK).map((key) => key.split('\n'));
      const where = part.map(() => '(o.operation_hash = ? AND o.operation_name = ?)').join(' OR ');
      const rows = await this.db.manager.query<{ operation_hash: string; operation_name: string; operation_type: UsageOperationDto['type']; coordinate: string | null }[]>(
        `SELECT o.operation_hash, o.operation_name, o.operation_type, c.coordinate
           FROM registry_usage_operations o
           LEFT JOIN registry_usage_coordinates c ON c.operation_hash = o.operation_hash AND c.operation_name = o.operation_name
          WHERE ${where}
          ORDER BY o.operation_hash, o.operation_name, c.coordinate`,
        part.flat(),
      );
      for (const row of rows) {
        const key = `${row.operation_hash}\n${row.operation_name}`;
        let op = operations.get(key);
        if (!op) {
          op = { hash: row.operation_hash, name: row.operation_name, type: row.operation_type, coordinates: [] };
          operations.set(key, op);
        }
        if (row.coordinate !== null) op.coordinates.push(row.coordinate);
      }
    }
    return [...operations.values()];
  }

  /** Each coordinate used since `since`, with its requests by client: one grouped query over the window. */
  async coordinateUsage(since: string): Promise<Map<string, CoordinateUsage>> {
    const rows = await this.db.manager.query<{ coordinate: string; client_name: string; client_version: string; requests: string | number; last_hour: string }[]>(
      `SELECT c.coordinate, h.client_name, h.client_version, SUM(h.count) AS requests, MAX(h.hour) AS last_hour
         FROM registry_usage_hourly h
         JOIN registry_usage_coordinates c ON c.operation_hash = h.operation_hash AND c.operation_name = h.operation_name
        WHERE h.hour >= ?
        GROUP BY c.coordinate, h.client_name, h.client_version`,
      [since],
    );
    const usage = new Map<string, CoordinateUsage>();
    for (const row of rows) {
      const requests = Number(row.requests);
      const entry = usage.get(row.coordinate) ?? { requests: 0, lastHour: row.last_hour, clients: [] };
      entry.requests += requests;
      if (row.last_hour > entry.lastHour) entry.lastHour = row.last_hour;
      entry.clients.push({ name: row.client_name, version: row.client_version, requests });
      usage.set(row.coordinate, entry);
    }
    for (const entry of usage.values()) entry.clients.sort((a, b) => b.requests - a.requests || a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
    return usage;
  }
}
