/**
 * Live answers for the UI: a stored subscription (operations/*.graphql) over Server-Sent Events at the
 * gateway's /graphql, with `graphql-sse`'s client and the admin's bearer token. The stream never
 * ends on its own: when it breaks (the gateway restarts, the network drops) or the gateway ends it
 * (the access token expired), it says so and subscribes again, with a fresh token after an
 * UNAUTHENTICATED end, waiting a little longer after each failure.
 */
import { createClient, type ExecutionResult } from 'graphql-sse';
import { accessToken, refresh } from './auth';
import { DashboardLiveDocument, type DashboardLiveSubscription, type TypedDocumentString } from './generated/operations';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

export interface LiveSink<T> {
  value(data: T): void;
  status(status: LiveStatus): void;
}

const RETRY_MS = [500, 1000, 2000, 4000];

const endedFor = (result: Pick<ExecutionResult, 'errors'>) =>
  (result.errors ?? []).map((error) => (error as { extensions?: { code?: string } }).extensions?.code).find((code) => code !== undefined);

/** Subscribes `document` until the returned function is called. */
export function live<T, V>(document: TypedDocumentString<T, V>, variables: V, sink: LiveSink<T>): () => void {
  let stopped = false;
  let dispose: (() => void) | undefined;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const again = () => {
    if (stopped) return;
    sink.status('reconnecting');
    timer = setTimeout(open, RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]);
    failures += 1;
  };

  function open(): void {
    if (stopped) return;
    const client = createClient({
      url: '/graphql',
      headers: async () => {
        const token = await accessToken();
        const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
        return headers;
      },
      // Reconnecting is this module's: the client's own attempts would not tell the page.
      retryAttempts: 0,
    });
    dispose = () => client.dispose();
    let ended: string | undefined;
    client.subscribe<T>(
      { query: document.toString(), variables: variables as Record<string, unknown> },
      {
        next(result) {
          ended = endedFor(result);
          if (result.data) {
            failures = 0;
            sink.status('live');
            sink.value(result.data);
          }
        },
        error() {
          client.dispose();
          again();
        },
        complete() {
          client.dispose();
          if (stopped) return;
          // The gateway ended the stream: a new token when it was the token, then a new stream.
          if (ended === 'UNAUTHENTICATED') void refresh().finally(again);
          else again();
        },
      },
    );
  }

  sink.status('connecting');
  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    dispose?.();
  };
}

export type { DashboardLiveSubscription as LiveFigures } from './generated/operations';

/** The dashboard's all-time figures, live. */
export function liveDashboard(sink: LiveSink<DashboardLiveSubscription>): () => void {
  return live(DashboardLiveDocument, {}, sink);
}
