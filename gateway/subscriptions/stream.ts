/**
 * One subscriber's stream: the answers it is due, at most one waiting at a time. A state
 * subscription's answer replaces the one still waiting (a slow reader skips intermediate values and
 * always gets the last), and nothing is handed to the connection while its send buffer is full, so
 * the gateway never buffers without bound for a reader that does not read.
 */
/** An answer as the subscriber gets it: the GraphQL result and its revision (the SSE event id). */
export interface Answer {
  result: LiveResult;
  revision: string;
}

export interface LiveResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/** Who holds a stream: the verified caller of the request that opened it. */
export interface Caller {
  userId: string;
  role: 'USER' | 'ADMIN';
  sessionId: string;
  issuedAtMs: number;
  expiresAtMs: number;
  /** The request's Authorization, sent again with each run of the selection. */
  authorization: string;
  /** Who the subgraphs are told the client is (platform/forwarded.ts). */
  forwarded?: Record<string, string>;
}

/** The connection a stream writes to: only its send buffer is looked at. */
export interface Outlet {
  readonly writableNeedDrain: boolean;
  readonly destroyed: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

export const endResult = (code: string, message: string): LiveResult => ({ errors: [{ message, extensions: { code } }] });

export class LiveStream {
  private waiting: Answer | undefined;
  private wake: (() => void) | undefined;
  private ending: { final?: LiveResult } | undefined;
  private sentRevision: string | undefined;
  private readonly expiry: NodeJS.Timeout | undefined;
  /** Whether the stream has been given a value (its first: the current one). */
  hasValue = false;
  /** The ids of the answers handed out, oldest first, for the SSE writer to put on their events. */
  readonly revisions: string[] = [];

  constructor(
    readonly caller: Caller,
    private readonly outlet: Outlet | undefined,
    private readonly onEnd: (stream: LiveStream) => void,
  ) {
    const left = caller.expiresAtMs - Date.now();
    this.expiry = setTimeout(() => this.end(endResult('UNAUTHENTICATED', 'The access token expired: subscribe again with a new one')), Math.max(0, left));
    this.expiry.unref();
  }

  get ended(): boolean {
    return this.ending !== undefined;
  }

  /** The latest answer, replacing one not yet handed out; an answer equal to the last sent is dropped. */
  offer(answer: Answer): void {
    if (this.ending) return;
    this.hasValue = true;
    if (answer.revision === this.sentRevision && this.waiting === undefined) return;
    this.waiting = answer;
    this.wake?.();
  }

  /** Ends the stream (rights ended, the client went, the gateway stops), with a last result when given; what waits is dropped. */
  end(final?: LiveResult): void {
    if (this.ending) return;
    this.ending = { final };
    this.waiting = undefined;
    clearTimeout(this.expiry);
    this.onEnd(this);
    this.wake?.();
  }

  /** The results to send, in order, until the stream ends. */
  async *results(): AsyncGenerator<LiveResult> {
    try {
      for (;;) {
        if (this.ending) {
          if (this.ending.final) yield this.ending.final;
          return;
        }
        if (this.waiting && this.outlet?.writableNeedDrain) {
          await this.drained();
          continue;
        }
        const answer = this.waiting;
        if (answer) {
          this.waiting = undefined;
          this.sentRevision = answer.revision;
          this.revisions.push(answer.revision);
          yield answer.result;
          continue;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      this.end();
    }
  }

  /** Resolves once the connection's buffer has drained, it closed, or the stream ended. */
  private drained(): Promise<void> {
    const outlet = this.outlet;
    if (!outlet || outlet.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        outlet.off('drain', done);
        outlet.off('close', done);
        this.wake = undefined;
        resolve();
      };
      outlet.once('drain', done);
      outlet.once('close', done);
      this.wake = done;
    });
  }
}
