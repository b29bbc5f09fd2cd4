/**
 * The schema registry's tables (CONTRACT §13): each distinct supergraph recorded with its subgraph
 * SDLs, and field usage as the gateway reports it: the operations with the coordinates they touch,
 * and how often each client ran each operation in each hour.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../../platform/database';

const bigint = { type: 'bigint' as const, transformer: { to: (v: number) => v, from: (v: string | number) => Number(v) } };

@Entity({ name: 'registry_schema_versions' })
export class SchemaVersion {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'supergraph_hash', type: 'varchar', length: 64, unique: true })
  supergraphHash!: string;

  @Column({ name: 'supergraph_sdl', type: 'text' })
  supergraphSdl!: string;

  @Column({ name: 'commit_sha', type: 'varchar', length: 64, nullable: true })
  commit!: string | null;

  @Column({ name: 'published_by', type: 'varchar', length: 255, nullable: true })
  publishedBy!: string | null;

  @TimestampColumn('recorded_at')
  recordedAt!: Date;

  @TimestampColumn('published_at', { nullable: true })
  publishedAt!: Date | null;

  @TimestampColumn('served_at', { nullable: true })
  servedAt!: Date | null;
}

@Entity({ name: 'registry_schema_subgraphs' })
export class SchemaVersionSubgraph {
  @PrimaryColumn({ name: 'version_id', type: 'varchar', length: 36 })
  versionId!: string;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'varchar', length: 2048, nullable: true })
  url!: string | null;

  @Column({ type: 'text' })
  sdl!: string;
}

@Entity({ name: 'registry_usage_operations' })
export class UsageOperation {
  @PrimaryColumn({ name: 'operation_hash', type: 'varchar', length: 64 })
  hash!: string;

  @PrimaryColumn({ name: 'operation_name', type: 'varchar', length: 255 })
  name!: string;

  @Column({ name: 'operation_type', type: 'varchar', length: 12 })
  type!: 'query' | 'mutation' | 'subscription';
}

@Entity({ name: 'registry_usage_coordinates' })
export class UsageCoordinate {
  @PrimaryColumn({ name: 'operation_hash', type: 'varchar', length: 64 })
  hash!: string;

  @PrimaryColumn({ name: 'operation_name', type: 'varchar', length: 255 })
  name!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  coordinate!: string;
}

@Entity({ name: 'registry_usage_hourly' })
export class UsageHourly {
  @PrimaryColumn({ type: 'varchar', length: 20 })
  hour!: string;

  @PrimaryColumn({ name: 'operation_hash', type: 'varchar', length: 64 })
  hash!: string;

  @PrimaryColumn({ name: 'operation_name', type: 'varchar', length: 255 })
  name!: string;

  @PrimaryColumn({ name: 'client_name', type: 'varchar', length: 128 })
  client!: string;

  @PrimaryColumn({ name: 'client_version', type: 'varchar', length: 64 })
  version!: string;

  @Column({ ...bigint })
  count!: number;
}

export const REGISTRY_ENTITIES = [SchemaVersion, SchemaVersionSubgraph, UsageOperation, UsageCoordinate, UsageHourly];
