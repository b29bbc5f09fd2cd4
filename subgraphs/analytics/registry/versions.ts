/**
 * The schema's history (CONTRACT §13): one version per distinct supergraph, with its subgraph SDLs,
 * the commit and who published it. Publishing a supergraph already recorded stamps it published
 * again (and the published SDLs, commit and author replace what a gateway recorded); a gateway
 * starting on one stamps it served. The version production runs is the one a gateway started on last.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { forUpdate, isUniqueViolation, type Database } from '../../../platform/database';
import type { SchemaVersionDetailDto, SchemaVersionDto, SchemaVersionReportDto } from '../../../platform/contracts/schema-registry';
import { SchemaVersion, SchemaVersionSubgraph } from './entities';

/** The text a supergraph is known by: line ends and trailing blank lines do not make another version. */
export const normalisedSdl = (text: string) => `${text.replace(/\r\n/g, '\n').trimEnd()}\n`;
export const supergraphHashOf = (text: string) => createHash('sha256').update(normalisedSdl(text)).digest('hex');

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function toDto(version: SchemaVersion, subgraphs: string[]): SchemaVersionDto {
  return {
    id: version.id,
    supergraphHash: version.supergraphHash,
    commit: version.commit,
    publishedBy: version.publishedBy,
    recordedAt: version.recordedAt.toISOString(),
    publishedAt: iso(version.publishedAt),
    servedAt: iso(version.servedAt),
    subgraphs,
  };
}

export class SchemaVersions {
  constructor(private readonly db: Database) {}

  /** Records a version, or stamps the one of the same supergraph; answers it and whether it is new. */
  async record(report: SchemaVersionReportDto, now = new Date()): Promise<{ version: SchemaVersionDto; created: boolean }> {
    const hash = supergraphHashOf(report.supergraphSdl);
    try {
      return await this.db.transaction((manager) => this.recordIn(manager, report, hash, now));
    } catch (error) {
      // Another replica recorded the same supergraph a moment ago: stamp that one.
      if (!isUniqueViolation(error)) throw error;
      return this.db.transaction((manager) => this.recordIn(manager, report, hash, now));
    }
  }

  private async recordIn(manager: EntityManager, report: SchemaVersionReportDto, hash: string, now: Date): Promise<{ version: SchemaVersionDto; created: boolean }> {
    const published = report.source === 'publish';
    const existing = await manager.findOne(SchemaVersion, { where: { supergraphHash: hash }, ...forUpdate(this.db) });
    let version: SchemaVersion;
    if (existing) {
      version = existing;
      if (published) {
        Object.assign(version, { publishedAt: now, commit: report.commit ?? version.commit, publishedBy: report.publishedBy ?? version.publishedBy });
      } else {
        version.servedAt = now;
      }
      await manager.save(version);
      if (published) await manager.delete(SchemaVersionSubgraph, { versionId: version.id });
    } else {
      version = manager.create(SchemaVersion, {
        id: randomUUID(),
        supergraphHash: hash,
        supergraphSdl: normalisedSdl(report.supergraphSdl),
        commit: report.commit ?? null,
        publishedBy: report.publishedBy ?? null,
        recordedAt: now,
        publishedAt: published ? now : null,
        servedAt: published ? null : now,
      });
      await manager.insert(SchemaVersion, version);
    }
    if (!existing || published) {
      const subgraphs = report.subgraphs.map((s) => ({ versionId: version.id, name: s.name, url: s.url ?? null, sdl: s.sdl }));
      if (subgraphs.length > 0) await manager.insert(SchemaVersionSubgraph, subgraphs);
    }
    const names = await manager.find(SchemaVersionSubgraph, { select: { name: true }, where: { versionId: version.id }, order: { name: 'ASC' } });
    return {
      version: toDto(
        version,
        names.map((s) => s.name),
      ),
      created: !existing,
    };
  }

  /** The newest versions first (by when each was first recorded). */
  async list(limit: number): Promise<SchemaVersionDto[]> {
    const versions = await this.db.manager.find(SchemaVersion, {
      select: { id: true, supergraphHash: true, commit: true, publishedBy: true, recordedAt: true, publishedAt: true, servedAt: true },
      order: { recordedAt: 'DESC', id: 'ASC' },
      take: limit,
    });
    const subgraphs =
      versions.length === 0
        ? []
        : await this.db.manager
            .createQueryBuilder(SchemaVersionSubgraph, 's')
            .select(['s.versionId', 's.name'])
            .where('s.version_id IN (:...ids)', { ids: versions.map((v) => v.id) })
            .orderBy('s.name', 'ASC')
            .getMany();
    return versions.map((version) =>
      toDto(
        version,
        subgraphs.filter((s) => s.versionId === version.id).map((s) => s.name),
      ),
    );
  }

  async get(id: string): Promise<SchemaVersionDetailDto | null> {
    const version = await this.db.manager.findOne(SchemaVersion, { where: { id } });
    return version ? this.detail(version) : null;
  }

  /** The version production runs: the one a gateway started on last, else the one published last. */
  async served(): Promise<SchemaVersionDetailDto | null> {
    const byServed = await this.db.manager.createQueryBuilder(SchemaVersion, 'v').where('v.served_at IS NOT NULL').orderBy('v.served_at', 'DESC').getOne();
    const version = byServed ?? (await this.db.manager.createQueryBuilder(SchemaVersion, 'v').where('v.published_at IS NOT NULL').orderBy('v.published_at', 'DESC').getOne());
    return version ? this.detail(version) : null;
  }

  /** The version published, served or recorded last, whichever happened last: the schema the admin's usage page lists. */
  async latest(): Promise<SchemaVersionDetailDto | null> {
    const stamps = await this.db.manager.find(SchemaVersion, { select: { id: true, recordedAt: true, publishedAt: true, servedAt: true } });
    const last = (v: SchemaVersion) => Math.max(v.recordedAt.getTime(), v.publishedAt?.getTime() ?? 0, v.servedAt?.getTime() ?? 0);
    const newest = stamps.reduce<SchemaVersion | undefined>((best, v) => (best === undefined || last(v) > last(best) ? v : best), undefined);
    return newest ? this.get(newest.id) : null;
  }

  private async detail(version: SchemaVersion): Promise<SchemaVersionDetailDto> {
    const subgraphs = await this.db.manager.find(SchemaVersionSubgraph, { where: { versionId: version.id }, order: { name: 'ASC' } });
    return {
      ...toDto(
        version,
        subgraphs.map((s) => s.name),
      ),
      supergraphSdl: version.supergraphSdl,
      subgraphSdls: subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.sdl })),
    };
  }
}
