/**
 * The readers of the live-figures benchmark (bench/subscriptions.ts), in a process of their own so
 * that their parsing does not slow the services or the gateway it measures: `count` readers that
 * either hold a Server-Sent Events subscription (`sse`) or ask the dashboard query every
 * `pollMs` (`poll`). Each notes when it first saw each value of `paidOrders`. It writes `connected`
 * once every stream is open and `ready` once every reader has its first value; a line `mark` on
 * stdin starts the count of answers again, and a line `stop` makes it write one JSON line: per
 * reader, the [time, paidOrders] of each change it saw, and how many answers it got since `mark`.
 */
import { createInterface } from 'node:readline';
import { Agent, fetch as undiciFetch } from 'undici';

interface ReadersOptions {
  mode: 'sse' | 'poll';
  url: string;
  headers: Record<string, string>;
  /** The request body: the subscription, or the query polled. */
  body: { query: string; variables?: Record<string, unknown> };
  /** Where `paidOrders` is in a result's data: `dashboardUpdated`, `dashboardFeed` or `dashboard`. */
  field: string;
  count: number;
  pollMs: number;
}

const now = () => performance.timeOrigin + performance.now();

interface Reader {
  seen: [number, number][];
  answers: number;
  last: number | undefined;
}

/** Notes an answer; false when it carries no figures (an error), which a reader fails on. */
function note(reader: Reader, data: unknown, field: string): boolean {
  reader.answers += 1;
  const paid = (data as Record<string, { paidOrders?: number } | undefined> | null | undefined)?.[field]?.paidOrders;
  if (typeof paid !== 'number') return false;
  if (paid === reader.last) return true;
  reader.last = paid;
  reader.seen.push([now(), paid]);
  return true;
}

async function subscribe(options: ReadersOptions, reader: Reader, agent: Agent, signal: AbortSignal, first: () => void, open: () => void): Promise<void> {
  const res = await undiciFetch(options.url, {
    method: 'POST',
    headers: { ...options.headers, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify(options.body),
    dispatcher: agent,
    signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`subscription answered ${res.status}: ${await res.text()}`);
  open();
  const decoder = new TextDecoder();
  let buffer = '';
  let firstSeen = false;
  try {
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (!block.includes('event: next') || !data) continue;
        if (!note(reader, (JSON.parse(data) as { data?: unknown }).data, options.field)) throw new Error(`an answer without figures: ${data}`);
        if (!firstSeen) {
          firstSeen = true;
          first();
        }
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

async function poll(options: ReadersOptions, reader: Reader, agent: Agent, signal: AbortSignal, first: () => void, open: () => void): Promise<void> {
  open();
  // Spread over the interval, as readers who opened the page at different moments are.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * options.pollMs));
  let firstSeen = false;
  while (!signal.aborted) {
    const began = now();
    const res = await undiciFetch(options.url, {
      method: 'POST',
      headers: { ...options.headers, 'content-type': 'application/json' },
      body: JSON.stringify(options.body),
      dispatcher: agent,
    });
    const body = (await res.json()) as { data?: unknown };
    if (!note(reader, body.data, options.field)) throw new Error(`an answer without figures: ${JSON.stringify(body)}`);
    if (!firstSeen) {
      firstSeen = true;
      first();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.pollMs - (now() - began))));
  }
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]) as ReadersOptions;
  const agent = new Agent({ connections: options.count + 10, pipelining: 1, keepAliveTimeout: 60_000 });
  const control = new AbortController();
  const readers: Reader[] = Array.from({ length: options.count }, () => ({ seen: [], answers: 0, last: undefined }));
  let firsts = 0;
  let opened = 0;
  const first = () => {
    firsts += 1;
    if (firsts === options.count) process.stdout.write('ready\n');
  };
  const open = () => {
    opened += 1;
    if (opened === options.count) process.stdout.write('connected\n');
  };
  const run = options.mode === 'sse' ? subscribe : poll;
  const running = readers.map(async (reader, index) => {
    // Opened a few at a time, as a crowd arrives, rather than 1,000 connections in one tick.
    await new Promise((resolve) => setTimeout(resolve, index * 2));
    await run(options, reader, agent, control.signal, first, open);
  });
  const failed = Promise.all(running).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
  for await (const line of createInterface({ input: process.stdin })) {
    // `mark`: the answers counted from here on (the measured part begins).
    if (line.trim() === 'mark') for (const reader of readers) reader.answers = 0;
    if (line.trim() === 'stop') break;
  }
  control.abort();
  await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 1000))]);
  process.stdout.write(`${JSON.stringify(readers.map((reader) => ({ seen: reader.seen, answers: reader.answers })))}\n`);
  await agent.close().catch(() => undefined);
  process.exit(0);
}

void main();
