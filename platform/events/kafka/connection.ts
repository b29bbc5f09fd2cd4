/**
 * What every Kafka operation of the adapter goes through: a bound on how long it may take, and the
 * kafkajs clients (the producer, the admin) connected on first use and replaced after a failure.
 */

// Bounded everywhere: a client that retried forever would hide an outage from the relay's back-off.
export const CLIENT_RETRY = { retries: 5, initialRetryTime: 100, maxRetryTime: 2000, factor: 0.2, multiplier: 2 };

/** A Kafka operation that did not finish within its bound. */
export class KafkaTimeoutError extends Error {}

export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new KafkaTimeoutError(`${what} timed out after ${ms} ms`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A kafkajs client connected on first use and replaced after a failure or a timeout. */
export class Reconnecting<T extends { connect(): Promise<void>; disconnect(): Promise<void> }> {
  private ready: Promise<T> | undefined;

  constructor(private readonly create: () => T) {}

  async use<R>(what: string, timeoutMs: number, work: (client: T) => Promise<R>): Promise<R> {
    if (!this.ready) {
      const client = this.create();
      this.ready = client.connect().then(() => client);
    }
    const ready = this.ready;
    const attempt = ready.then(work);
    try {
      return await withTimeout(attempt, timeoutMs, what);
    } catch (error) {
      attempt.catch(() => undefined);
      if (this.ready === ready) this.ready = undefined;
      ready.then((client) => client.disconnect()).catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    const ready = this.ready;
    this.ready = undefined;
    await ready?.then((client) => client.disconnect()).catch(() => undefined);
  }
}
