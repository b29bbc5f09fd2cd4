/**
 * The schema registry (CONTRACT §13), kept by the analytics service: what the gateway reports of the
 * operations it runs (`POST /analytics/internal/usage`), a version of the schema as published or as
 * a gateway starts on it (`POST /analytics/internal/schema/versions`), and the usage export that
 * `npm run schema:check` judges changes by (`GET /analytics/internal/schema/usage-export`, or the
 * admin route `GET /analytics/schema/usage-export`).
 */

/** An hour of usage: its first instant, `yyyy-MM-ddTHH:00:00Z` (UTC). */
export type UsageHour = string;

/** An operation as the gateway identifies it: the sha256 hex of its document's text, and its name ('' when anonymous). */
export interface UsageOperationKey {
  hash: string;
  name: string;
}

/** An operation with the schema coordinates it touches (`Type`, `Type.field`, `Type.field.argument`, `Input.field`, `Enum.VALUE`). */
export interface UsageOperationDto extends UsageOperationKey {
  type: 'query' | 'mutation' | 'subscription';
  coordinates: string[];
}

/** How often one client ran one operation in one hour. */
export interface UsageCountDto extends UsageOperationKey {
  hour: UsageHour;
  /** `apollographql-client-name` or `graphql-client-name`, else "unknown". */
  client: string;
  /** `apollographql-client-version` or `graphql-client-version`, else "unknown". */
  version: string;
  count: number;
}

/** One report of the gateway: its counts, and each operation they name with its coordinates. */
export interface UsageReportDto {
  operations: UsageOperationDto[];
  counts: UsageCountDto[];
}

export const UNKNOWN_CLIENT = 'unknown';

/** Longest client name and version kept; a longer header is cut. */
export const CLIENT_NAME_MAX = 128;
export const CLIENT_VERSION_MAX = 64;
/** Most operations and counts in one report; the gateway splits a bigger one. */
export const REPORT_MAX_OPERATIONS = 500;
export const REPORT_MAX_COUNTS = 5000;
/** Most coordinates of one operation (the gateway's limits keep real ones far below). */
export const OPERATION_MAX_COORDINATES = 5000;

/** The start of the hour `at` falls in, as a UsageHour. */
export function usageHourOf(at: Date | number): UsageHour {
  return `${new Date(at).toISOString().slice(0, 13)}:00:00Z`;
}

export type SchemaVersionSource = 'publish' | 'gateway';

export interface SubgraphSdlDto {
  name: string;
  /** The subgraph's routing URL as composed, when known. */
  url?: string | null;
  sdl: string;
}

/** A version of the schema to record: published (`npm run schema:publish`) or served (a gateway starting on it). */
export interface SchemaVersionReportDto {
  source: SchemaVersionSource;
  supergraphSdl: string;
  subgraphs: SubgraphSdlDto[];
  commit?: string | null;
  /** Who published it (a person or a pipeline), or the gateway that serves it. */
  publishedBy?: string | null;
}

/** A recorded version, as the registry answers it (without the SDL texts unless asked for one version). */
export interface SchemaVersionDto {
  id: string;
  /** sha256 hex of the supergraph's text: one version per distinct supergraph. */
  supergraphHash: string;
  commit: string | null;
  publishedBy: string | null;
  /** When it was first recorded. */
  recordedAt: string;
  /** When it was last published, if ever. */
  publishedAt: string | null;
  /** When a gateway last started on it, if ever. */
  servedAt: string | null;
  subgraphs: string[];
}

export interface SchemaVersionDetailDto extends SchemaVersionDto {
  supergraphSdl: string;
  subgraphSdls: SubgraphSdlDto[];
}

/** The usage of a window, hour by hour: what `schema:check` judges by, and the file it may read instead. */
export interface UsageExportDto {
  /** The window: `since` inclusive, `until` exclusive (hours). */
  since: UsageHour;
  until: UsageHour;
  operations: UsageOperationDto[];
  counts: UsageCountDto[];
}
