/**
 * A Server-Sent Events reader for tests: opens a request that accepts `text/event-stream` and
 * collects its events as they come (event name, id, data), so a test waits for the next one or
 * reads the status of a refusal. Plain `fetch`, so nothing decides for the test what a stream is.
 */
import { waitFor } from './wait';

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Every event received so far (comments left out). */
  events: SseEvent[];
  /** Comment lines received (heartbeats). */
  comments: number;
  /** Resolves when the server ends the stream. */
  closed: Promise<void>;
  readonly ended: boolean;
  /** The body of an answer that is not a stream. */
  text(): Promise<string>;
  /** Waits for the event at `index` (counting from 0 over the whole stream). */
  nth(index: number, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export interface SseRequest {
  method?: 'GET' | 'POST';
  body?: unknown;
  headers?: Record<string, string>;
}

export async function openSse(url: string, request: SseRequest = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
    headers: { accept: 'text/event-stream', ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  let comments = 0;
  let ended = false;
  const streaming = res.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
  const closed = (async () => {
    if (!streaming || !res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { event: 'message', data: '' };
          let fields = 0;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments += 1;
              continue;
            }
            const at = line.indexOf(':');
            const name = at < 0 ? line : line.slice(0, at);
            const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
            fields += 1;
            if (name === 'event') event.event = value;
            else if (name === 'id') event.id = value;
            else if (name === 'data') event.data = event.data ? `${event.data}\n${value}` : value;
          }
          if (fields > 0) events.push(event);
        }
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true;
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    events,
    get comments() {
      return comments;
    },
    closed,
    get ended() {
      return ended;
    },
    text: () => res.text(),
    nth: (index, timeoutMs = 15_000) =>
      waitFor(() => events[index], { timeoutMs, what: `event #${index} of the stream (${events.length} so far: ${JSON.stringify(events.slice(-3))})` }),
    close: () => controller.abort(),
  };
}

/** The GraphQL result a graphql-sse `next` event carries. */
export function resultOf<T = Record<string, unknown>>(event: SseEvent): { data?: T | null; errors?: { message: string; extensions?: { code?: string } }[] } {
  if (event.event !== 'next') throw new Error(`expected a next event, got ${event.event}: ${event.data}`);
  return JSON.parse(event.data) as { data?: T | null; errors?: { message: string; extensions?: { code?: string } }[] };
}
