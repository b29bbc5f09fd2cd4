/**
 * The schema a gateway serves, reported once it starts (CONTRACT §13): the supergraph and each
 * subgraph's SDL as extracted from it go to the registry (`POST /analytics/internal/schema/versions`,
 * source `gateway`), which records a supergraph it has not seen and stamps one it has as served. The
 * analytics service may come up after the gateway: the report is tried again, more slowly each time,
 * until it is taken or the gateway stops; no request waits for it.
 */
import os from 'node:os';
import { Supergraph } from '@apollo/federation-internals';
import type { Config } from '../platform/config';
import { INTERNAL_KEY_HEADER } from '../platform/auth';
import type { SchemaVersionReportDto } from '../platform/contracts/schema-registry';
import type { Logger } from '../platform/logger';

export const SCHEMA_VERSIONS_PATH = '/analytics/internal/schema/versions';
const FIRST_RETRY_MS = 1000;
const LONGEST_RETRY_MS = 60_000;
const SEND_TIMEOUT_MS = 10_000;

/** The report of a supergraph: its text and its subgraphs' SDLs (as the supergraph holds them, not as written). */
export function servedSchemaReport(supergraphSdl: string): SchemaVersionReportDto {
  const subgraphs = [...Supergraph.build(supergraphSdl).subgraphs()].map((subgraph) => ({ name: subgraph.name, url: subgraph.url, sdl: subgraph.toString() }));
  return { source: 'gateway', supergraphSdl, subgraphs, commit: null, publishedBy: `gateway@${os.hostname()}` };
}

export interface SchemaReporter {
  /** Resolves once the registry took the report, or the reporter stopped. */
  readonly done: Promise<void>;
  stop(): void;
}

export function reportServedSchema(options: {
  config: Pick<Config, 'internalApiKey'> & { urls: Pick<Config['urls'], 'analytics'> };
  logger: Logger;
  supergraphSdl: string;
}): SchemaReporter {
  const log = options.logger.child({ component: 'schema-report' });
  const body = JSON.stringify(servedSchemaReport(options.supergraphSdl));
  let stopped = false;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const done = (async () => {
    for (let wait = FIRST_RETRY_MS, attempt = 1; !stopped; wait = Math.min(wait * 2, LONGEST_RETRY_MS), attempt += 1) {
      try {
        const res = await fetch(`${options.config.urls.analytics}${SCHEMA_VERSIONS_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [INTERNAL_KEY_HEADER]: options.config.internalApiKey },
          body,
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        const answer = (await res.json().catch(() => undefined)) as { id?: string } | undefined;
        if (res.ok) {
          log.info({ versionId: answer?.id, created: res.status === 201 }, 'served schema reported to the registry');
          return;
        }
        if (res.status < 500) {
          log.error({ status: res.status, answer }, 'the registry refused the served schema; it is not reported');
          return;
        }
        if (attempt === 1) log.warn({ status: res.status }, 'the registry did not take the served schema; trying again');
      } catch (error) {
        if (attempt === 1) log.warn({ err: error }, 'the registry is not reachable; the served schema is reported once it is');
      }
      await pause(wait);
    }
  })();

  return {
    done,
    stop() {
      stopped = true;
      wake?.();
    },
  };
}
