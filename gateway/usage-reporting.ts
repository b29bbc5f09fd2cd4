/**
 * Field usage at the gateway (CONTRACT §13, `USAGE_REPORTING`): each operation the gateway executes
 * is counted by hour, operation (its document's sha256 and its name), and client
 * (`apollographql-client-name`/`-version`, else `graphql-client-name`/`-version`, else "unknown");
 * the coordinates it touches are worked out once per document (gateway/usage-coordinates.ts). A
 * request that got the answer of an identical one in flight (gateway/shared-requests.ts) counts too.
 *
 * Nothing here is on the request's way: a request adds one to a counter in memory, and every
 * `USAGE_REPORT_INTERVAL_MS` the counts are handed to the analytics service, which keeps them
 * (`POST /analytics/internal/usage`, the internal key). Memory is bounded: past `USAGE_MAX_PENDING`
 * counters, a new one is dropped (`gateway_usage_dropped_total`); a report the store refuses or
 * cannot take goes back into the counters for the next, within the same bound. So an outage of the
 * store costs counts, never a request. Like the rest of the gateway it holds no rule: what a count
 * means is the registry's business (subgraphs/analytics/registry/).
 */
import type http from 'node:http';
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../platform/config';
import { INTERNAL_KEY_HEADER } from '../platform/auth';
import {
  CLIENT_NAME_MAX,
  CLIENT_VERSION_MAX,
  REPORT_MAX_COUNTS,
  REPORT_MAX_OPERATIONS,
  UNKNOWN_CLIENT,
  usageHourOf,
  type UsageCountDto,
  type UsageOperationDto,
  type UsageReportDto,
} from '../platform/contracts/schema-registry';
import type { Logger } from '../platform/logger';
import type { GatewayContext } from './subgraph-source';
import { isRecord } from './trusted-documents';
import { coordinatesOf } from './usage-coordinates';

/** Distinct documents whose coordinates are remembered before the memory starts again. */
const OPERATIONS_KEPT = 2000;
const SEND_TIMEOUT_MS = 5000;
const HOUR_MS = 3600_000;

export const USAGE_REPORT_PATH = '/analytics/internal/usage';

export interface UsageReportingOptions {
  config: Pick<Config, 'usage' | 'internalApiKey'> & { urls: Pick<Config['urls'], 'analytics'> };
  logger: Logger;
  registry?: Registry;
}

export interface UsageReporting {
  /** The Apollo Server plugin that counts each operation as it starts executing. */
  plugin: ApolloServerPlugin<GatewayContext>;
  /** A request answered with another's answer (same body and headers) counts as that one did. */
  recordShared(body: unknown, headers: http.IncomingHttpHeaders): void;
  /** Hands the counts over now; resolves once the store answered (or could not). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

type Headers = { get(name: string): string | undefined } | http.IncomingHttpHeaders;

const header = (headers: Headers, name: string): string | undefined => {
  const value = typeof headers.get === 'function' ? (headers as { get(name: string): string | undefined }).get(name) : (headers as http.IncomingHttpHeaders)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** Who the client says it is: Apollo's headers, else the GraphQL over HTTP convention's, else unknown. */
export function clientOf(headers: Headers): { client: string; version: string } {
  const client = header(headers, 'apollographql-client-name') ?? header(headers, 'graphql-client-name') ?? UNKNOWN_CLIENT;
  const version = header(headers, 'apollographql-client-version') ?? header(headers, 'graphql-client-version') ?? UNKNOWN_CLIENT;
  return { client: client.slice(0, CLIENT_NAME_MAX), version: version.slice(0, CLIENT_VERSION_MAX) };
}

/** An operation as the gateway tracks it: what it reports of it, and its counts since the last report by hour, client and version. */
interface Tracked {
  op: UsageOperationDto;
  counts: Map<string, UsageCountDto>;
}

export function usageReporting({ config, logger, registry }: UsageReportingOptions): UsageReporting {
  const log = logger.child({ component: 'usage-reporting' });
  const { maxPending, reportIntervalMs } = config.usage;
  /**
   * Each document's operations by the name the request gave ('' for none), keyed by the document's
   * text itself: a request that shares another's answer finds its operation without hashing anything.
   */
  let operations = new Map<string, Map<string, Tracked>>();
  /** The operations counted since the last report, and how many counters they hold. */
  let touched = new Set<Tracked>();
  let counters = 0;
  let hour = '';
  let hourEnds = 0;
  let flushing: Promise<void> | undefined;
  let failing = false;
  const registers = registry ? [registry] : [];
  const dropped = new Counter({ name: 'gateway_usage_dropped_total', help: 'Usage counts the gateway dropped: its counters were full (USAGE_MAX_PENDING)', registers });
  const reports = new Counter({ name: 'gateway_usage_reports_total', help: 'Usage reports sent to the registry, by outcome', labelNames: ['outcome'], registers });

  const currentHour = () => {
    const now = Date.now();
    if (now >= hourEnds) {
      hour = usageHourOf(now);
      hourEnds = Date.parse(hour) + HOUR_MS;
    }
    return hour;
  };

  const add = (tracked: Tracked, client: string, version: string, count = 1, at = currentHour()): boolean => {
    const key = `${at}\n${client}\n${version}`;
    const counted = tracked.counts.get(key);
    if (counted) {
      counted.count += count;
      return true;
    }
    if (counters >= maxPending) return false;
    counters += 1;
    tracked.counts.set(key, { hour: at, hash: tracked.op.hash, name: tracked.op.name, client, version, count });
    touched.add(tracked);
    return true;
  };

  const count = (tracked: Tracked, headers: Headers) => {
    const { client, version } = clientOf(headers);
    if (!add(tracked, client, version)) dropped.inc();
  };

  const listener: GraphQLRequestListener<GatewayContext> = {
    async executionDidStart({ request, operation, operationName, queryHash, document, schema: running }) {
      const text = request.query ?? queryHash;
      const requested = request.operationName ?? '';
      let named = operations.get(text);
      let tracked = named?.get(requested);
      if (!tracked) {
        if (!named) {
          // Forgetting documents only costs working their coordinates out again: counted ones wait in `touched`.
          if (operations.size >= OPERATIONS_KEPT) operations = new Map();
          named = new Map();
          operations.set(text, named);
        }
        tracked = {
          op: { hash: queryHash, name: operationName ?? '', type: operation.operation, coordinates: coordinatesOf(running, document, operationName) },
          counts: new Map(),
        };
        named.set(requested, tracked);
      }
      if (request.http) count(tracked, request.http.headers);
    },
  };

  /** Sends one report; false when the store should get it again later. */
  const send = async (report: UsageReportDto): Promise<boolean> => {
    let res: Response;
    try {
      res = await fetch(`${config.urls.analytics}${USAGE_REPORT_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [INTERNAL_KEY_HEADER]: config.internalApiKey },
        body: JSON.stringify(report),
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await res.arrayBuffer();
    } catch (error) {
      if (!failing) log.warn({ err: error }, 'usage report not delivered; the counts wait for the next one');
      failing = true;
      reports.inc({ outcome: 'failed' });
      return false;
    }
    if (res.ok) {
      if (failing) log.info('usage reports delivered again');
      failing = false;
      reports.inc({ outcome: 'delivered' });
      return true;
    }
    // The store is down or busy: later. It refuses the report itself: sending it again would not help.
    const again = res.status >= 500 || res.status === 429;
    if (again && !failing) log.warn({ status: res.status }, 'usage report not taken; the counts wait for the next one');
    if (!again) log.error({ status: res.status }, 'usage report refused; its counts are dropped');
    failing = again;
    reports.inc({ outcome: again ? 'failed' : 'refused' });
    return !again;
  };

  const flushNow = async (): Promise<void> => {
    if (touched.size === 0) return;
    const batch = [...touched].map((tracked) => {
      const counts = [...tracked.counts.values()];
      tracked.counts = new Map();
      return { tracked, counts };
    });
    touched = new Set();
    counters = 0;
    // Reports within the registry's limits: at most so many operations, and so many counts.
    let report: typeof batch = [];
    let size = 0;
    const reportsToSend: (typeof batch)[] = [];
    for (const entry of batch) {
      for (let i = 0; i < entry.counts.length; i += REPORT_MAX_COUNTS) {
        const part = { tracked: entry.tracked, counts: entry.counts.slice(i, i + REPORT_MAX_COUNTS) };
        if (report.length >= REPORT_MAX_OPERATIONS || size + part.counts.length > REPORT_MAX_COUNTS) {
          reportsToSend.push(report);
          report = [];
          size = 0;
        }
        report.push(part);
        size += part.counts.length;
      }
    }
    if (report.length > 0) reportsToSend.push(report);
    for (const entries of reportsToSend) {
      if (await send({ operations: entries.map((e) => e.tracked.op), counts: entries.flatMap((e) => e.counts) })) continue;
      // Back into the counters, as far as they have room.
      for (const { tracked, counts } of entries) {
        for (const c of counts) if (!add(tracked, c.client, c.version, c.count, c.hour)) dropped.inc(c.count);
      }
    }
  };

  const flush = (): Promise<void> => {
    flushing ??= flushNow().finally(() => {
      flushing = undefined;
    });
    return flushing;
  };

  const timer = setInterval(() => void flush(), reportIntervalMs);
  timer.unref();

  return {
    plugin: {
      async requestDidStart() {
        return listener;
      },
    },
    recordShared(body, headers) {
      if (!isRecord(body) || typeof body.query !== 'string') return;
      // The request whose answer it got executed it a moment ago and left its operation here; one
      // that did not execute (it failed validation) left none, and this one counts nothing either.
      const tracked = operations.get(body.query)?.get(typeof body.operationName === 'string' ? body.operationName : '');
      if (tracked) count(tracked, headers);
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
