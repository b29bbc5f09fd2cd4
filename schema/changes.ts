/**
 * Usage-aware judgement of schema changes (CONTRACT §13), what `npm run schema:check` decides a
 * breaking or dangerous change by. GraphQL Inspector classifies each change of the API schema
 * (breaking, dangerous or safe) and names the coordinate it concerns; this module judges the
 * breaking and dangerous ones, in this order:
 * 1. a breaking one that touches a trusted document or an admin UI operation fails, whatever else
 *    holds: those documents would break, and no acknowledgement makes them work (a dangerous one
 *    leaves them valid, ships with them, and is judged like any other: were it failed here too, no
 *    enum the admin UI reads could ever gain a value);
 * 2. one acknowledged in schema/acknowledged-breaking-changes.json until a date not yet past passes,
 *    with its reason (an acknowledgement past its date no longer holds, and says so);
 * 3. with usage data, one whose coordinate the clients not excluded used at least `threshold` times
 *    within the window fails, naming the operations and clients with their counts; one they did not
 *    use passes with a note;
 * 4. without usage data (no source, a source that could not be read, or one holding no operation
 *    in the window), a breaking change fails unless `allowNoUsage`, and a dangerous one passes with a note.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import type { UsageExportDto } from '../platform/contracts/schema-registry';
import { apiSchemaOf } from './compose';

export const ACKNOWLEDGED_FILE = 'schema/acknowledged-breaking-changes.json';
/** How far ahead an acknowledgement may run: it is a promise about clients, not a standing exception. */
export const ACKNOWLEDGEMENT_MAX_DAYS = 180;
const DAY_MS = 86_400_000;

export interface Acknowledgement {
  /** Inspector's change type, e.g. FIELD_REMOVED. */
  type: string;
  /** The coordinate the change concerns, as the check prints it (`Query.myOrders`). */
  path: string;
  reason: string;
  /** The last day (UTC, yyyy-MM-dd) it holds. */
  expires: string;
}

export interface SchemaChange {
  type: string;
  path: string | null;
  message: string;
  criticality: 'BREAKING' | 'DANGEROUS';
}

export interface OperationUsage {
  name: string;
  hash: string;
  requests: number;
  clients: { name: string; version: string; requests: number }[];
}

export type Verdict = 'fail' | 'pass';

export interface JudgedChange extends SchemaChange {
  verdict: Verdict;
  /** Why, in a sentence. */
  reason: string;
  /** The trusted documents and admin UI operations it touches. */
  protectedBy?: string[];
  acknowledgement?: Acknowledgement & { expired: boolean };
  /** Its usage within the window, when there is usage data. */
  usage?: { requests: number; operations: OperationUsage[] };
}

/** A document the system itself sends, with the coordinates it touches. */
export interface ProtectedDocument {
  label: string;
  coordinates: string[];
}

export interface JudgementContext {
  /** Usage to judge by; undefined when there is none, with `noUsageReason` saying why. */
  usage: UsageExportDto | undefined;
  noUsageReason: string;
  windowDays: number;
  threshold: number;
  excludedClients: string[];
  allowNoUsage: boolean;
  acknowledgements: Acknowledgement[];
  protectedDocuments: ProtectedDocument[];
  now: Date;
}

/** The breaking and dangerous changes from `baseSdl` to `newSdl` (supergraphs), by their API schemas. */
export async function schemaChanges(baseSdl: string, newSdl: string): Promise<SchemaChange[]> {
  const changes: Change[] = await diff(apiSchemaOf(baseSdl), apiSchemaOf(newSdl));
  return changes
    .filter((change) => change.criticality.level !== CriticalityLevel.NonBreaking)
    .map((change) => ({
      type: String(change.type),
      path: change.path ?? null,
      message: change.message,
      criticality: change.criticality.level === CriticalityLevel.Breaking ? 'BREAKING' : 'DANGEROUS',
    }));
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function readAcknowledged(root: string): Acknowledgement[] {
  const file = path.join(root, ACKNOWLEDGED_FILE);
  if (!fs.existsSync(file)) return [];
  const entries: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const valid = (entry: unknown): entry is Acknowledgement => {
    const e = entry as Partial<Acknowledgement> | null;
    return (
      typeof e?.type === 'string' &&
      typeof e.path === 'string' &&
      typeof e.reason === 'string' &&
      e.reason.trim() !== '' &&
      typeof e.expires === 'string' &&
      DATE.test(e.expires) &&
      !Number.isNaN(Date.parse(`${e.expires}T00:00:00Z`))
    );
  };
  if (!Array.isArray(entries) || !entries.every(valid)) {
    throw new Error(`${ACKNOWLEDGED_FILE} must be an array of { "type", "path", "reason", "expires": "yyyy-MM-dd" } with a non-empty reason`);
  }
  return entries;
}

/** Acknowledgements that run further ahead than ACKNOWLEDGEMENT_MAX_DAYS: a problem of the file. */
export function acknowledgementProblems(acknowledgements: Acknowledgement[], now: Date): string[] {
  const latest = new Date(now.getTime() + ACKNOWLEDGEMENT_MAX_DAYS * DAY_MS).toISOString().slice(0, 10);
  return acknowledgements
    .filter((ack) => ack.expires > latest)
    .map((ack) => `${ack.type} ${ack.path}: expires ${ack.expires}, more than ${ACKNOWLEDGEMENT_MAX_DAYS} days ahead (at most ${latest})`);
}

/**
 * The coordinates whose use a change concerns. A change to something that exists concerns its own
 * coordinate (and what lies below it: a removed type concerns its fields); something added cannot be
 * in use yet, so an addition concerns its parent's users (a required argument added to `Query.books`
 * breaks whoever calls `Query.books`; a value added to an enum surprises whoever reads the enum).
 * Directive parts of a path (`Type.field.@deprecated`) are dropped. None without a path.
 */
export function concernedCoordinate(change: Pick<SchemaChange, 'type' | 'path'>): string | undefined {
  if (!change.path) return undefined;
  const segments = change.path.split('.');
  const directive = segments.findIndex((segment) => segment.startsWith('@'));
  const own = directive >= 0 ? segments.slice(0, directive) : segments;
  if (own.length === 0) return undefined;
  return change.type.endsWith('_ADDED') && own.length > 1 ? own.slice(0, -1).join('.') : own.join('.');
}

const touches = (coordinates: Iterable<string>, concerned: string) => {
  for (const coordinate of coordinates) if (coordinate === concerned || coordinate.startsWith(`${concerned}.`)) return true;
  return false;
};

/** The operations of `usage` that touch `concerned` within the window, with their counts by client. */
function usageOf(usage: UsageExportDto, concerned: string, context: JudgementContext): { requests: number; operations: OperationUsage[] } {
  const since = new Date(context.now.getTime() - context.windowDays * DAY_MS).toISOString().slice(0, 13);
  const excluded = new Set(context.excludedClients);
  const touching = new Map(usage.operations.filter((op) => touches(op.coordinates, concerned)).map((op) => [`${op.hash}\n${op.name}`, op]));
  const operations = new Map<string, OperationUsage>();
  for (const count of usage.counts) {
    // An hour counts when it starts within the window: the hour the window starts in is whole.
    if (count.hour.slice(0, 13) < since || excluded.has(count.client)) continue;
    const op = touching.get(`${count.hash}\n${count.name}`);
    if (!op) continue;
    const key = `${op.hash}\n${op.name}`;
    const entry = operations.get(key) ?? { name: op.name, hash: op.hash, requests: 0, clients: [] };
    entry.requests += count.count;
    const client = entry.clients.find((c) => c.name === count.client && c.version === count.version);
    if (client) client.requests += count.count;
    else entry.clients.push({ name: count.client, version: count.version, requests: count.count });
    operations.set(key, entry);
  }
  const list = [...operations.values()].sort((a, b) => b.requests - a.requests || a.name.localeCompare(b.name));
  for (const op of list) op.clients.sort((a, b) => b.requests - a.requests || a.name.localeCompare(b.name));
  return { requests: list.reduce((sum, op) => sum + op.requests, 0), operations: list };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function describeUsage(usage: { requests: number; operations: OperationUsage[] }): string {
  const operations = usage.operations.map(
    (op) => `${op.name || 'anonymous'} (${op.hash.slice(0, 12)}) from ${op.clients.map((c) => `${c.name} ${c.version} ×${c.requests}`).join(', ')}`,
  );
  return `${plural(usage.requests, 'request')} by ${plural(usage.operations.length, 'operation')}: ${operations.join('; ')}`;
}

export function judgeChanges(changes: SchemaChange[], context: JudgementContext): JudgedChange[] {
  const today = context.now.toISOString().slice(0, 10);
  return changes.map((change): JudgedChange => {
    const concerned = concernedCoordinate(change);
    const protectedBy =
      concerned === undefined || change.criticality !== 'BREAKING' ? [] : context.protectedDocuments.filter((doc) => touches(doc.coordinates, concerned)).map((doc) => doc.label);
    if (protectedBy.length > 0) {
      return { ...change, verdict: 'fail', reason: `it touches what the system itself sends: ${protectedBy.join(', ')}`, protectedBy };
    }
    const ack = context.acknowledgements.find((a) => a.type === change.type && a.path === change.path);
    const acknowledgement = ack && { ...ack, expired: ack.expires < today };
    if (acknowledgement && !acknowledgement.expired) {
      return { ...change, verdict: 'pass', reason: `acknowledged until ${acknowledgement.expires}: ${acknowledgement.reason}`, acknowledgement };
    }
    const lapsed = acknowledgement ? ` (its acknowledgement expired on ${acknowledgement.expires})` : '';
    const window = `in the last ${plural(context.windowDays, 'day')}`;
    if (context.usage && concerned !== undefined) {
      const usage = usageOf(context.usage, concerned, context);
      if (usage.requests >= context.threshold) {
        return { ...change, verdict: 'fail', reason: `used ${window}${lapsed}: ${describeUsage(usage)}`, acknowledgement, usage };
      }
      const below = usage.requests > 0 ? `used ${plural(usage.requests, 'time')} ${window}, below the threshold of ${context.threshold}` : `unused ${window}`;
      return { ...change, verdict: 'pass', reason: `${below}${lapsed}`, acknowledgement, usage };
    }
    const why = concerned === undefined ? 'usage of this kind of change is not recorded' : `no usage data (${context.noUsageReason})`;
    if (change.criticality === 'DANGEROUS') return { ...change, verdict: 'pass', reason: `${why}; dangerous only${lapsed}`, acknowledgement };
    if (context.allowNoUsage) return { ...change, verdict: 'pass', reason: `${why}; allowed by SCHEMA_CHECK_ALLOW_NO_USAGE${lapsed}`, acknowledgement };
    return {
      ...change,
      verdict: 'fail',
      reason: `${why}${lapsed}: acknowledge it in ${ACKNOWLEDGED_FILE} with a reason and an expiry date if clients are ready`,
      acknowledgement,
    };
  });
}
