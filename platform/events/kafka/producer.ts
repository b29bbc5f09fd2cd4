/**
 * Publishing to Kafka. A publish is one Kafka transaction (a transactional id per bus, reused by the
 * producer that replaces a failed one): a process killed while its batch is on the way leaves an
 * open transaction, which the broker aborts after `transactionTimeoutMs` (or at once when this bus's
 * next producer starts), and our consumers read committed messages only. So when the outbox relay
 * of a dead replica never saw the broker's acknowledgement, the copy that another relay publishes is
 * the only one consumers ever see. Publishes of one bus are made one at a time; a large one goes
 * out in several produce requests within its transaction (produceRequests).
 */
import { randomUUID } from 'node:crypto';
import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { BusMessage, PublishOptions } from '../bus';
import { PUBLISHER, PUBLISHER_HEADER } from '../bus';
import type { KafkaAdmin } from './admin';
import { KafkaTimeoutError, Reconnecting } from './connection';
import { isRetriableKafkaError } from './errors';

// The transaction coordinator answers CONCURRENT_TRANSACTIONS to a batch that follows the previous
// commit too closely (its markers are still being written): retried after 100 ms, that would cost
// each batch a tenth of a second. Shorter first pauses, more of them: about as long in all (4.5 s).
const PRODUCER_RETRY = { retries: 8, initialRetryTime: 20, maxRetryTime: 2000, factor: 0.2, multiplier: 2 };

/**
 * Bytes of keys, values and headers per produce request: what one request carries for a partition
 * must stay under the broker's `message.max.bytes` (1 MiB by default), whatever the batch size.
 */
export const MAX_REQUEST_BYTES = 512 << 10;

type TopicMessages = { topic: string; messages: { key: string; value: string; headers: Record<string, string> }[] }[];

function sizeOf(message: BusMessage): number {
  let bytes = Buffer.byteLength(message.key) + Buffer.byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {})) bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  return bytes;
}

/**
 * `messages` as the produce requests of one transaction, in order: each request up to
 * MAX_REQUEST_BYTES (a larger message goes alone), its messages grouped by topic. The requests are
 * sent one after the other, so the order per partition is the order of `messages`.
 */
export function produceRequests(messages: BusMessage[], maxBytes = MAX_REQUEST_BYTES): TopicMessages[] {
  const requests: TopicMessages[] = [];
  let byTopic = new Map<string, TopicMessages[number]['messages']>();
  let bytes = 0;
  const flush = () => {
    if (byTopic.size > 0) requests.push([...byTopic].map(([topic, list]) => ({ topic, messages: list })));
    byTopic = new Map();
    bytes = 0;
  };
  for (const message of messages) {
    const size = sizeOf(message);
    if (bytes > 0 && bytes + size > maxBytes) flush();
    bytes += size;
    const list = byTopic.get(message.topic);
    const sent = { key: message.key, value: message.value, headers: { ...message.headers, [PUBLISHER_HEADER]: PUBLISHER } };
    if (list) list.push(sent);
    else byTopic.set(message.topic, [sent]);
  }
  flush();
  return requests;
}

export interface TransactionalProducerOptions {
  clientId: string;
  /** A publish rejects after this long, so the outbox relay backs off instead of hanging. */
  publishTimeoutMs?: number;
  /** How long the broker keeps the transaction of a publisher that vanished before aborting it (default 10 s). */
  transactionTimeoutMs?: number;
}

export class TransactionalProducer {
  private readonly producer: Reconnecting<Producer>;
  private publishing: Promise<unknown> = Promise.resolve();

  constructor(
    kafka: Kafka,
    private readonly topics: KafkaAdmin,
    private readonly options: TransactionalProducerOptions,
  ) {
    const transactionalId = `${options.clientId}-${randomUUID()}`;
    this.producer = new Reconnecting(() =>
      kafka.producer({
        transactionalId,
        transactionTimeout: options.transactionTimeoutMs ?? 10_000,
        idempotent: true,
        // One request in flight per broker keeps the order per key even across retries.
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: PRODUCER_RETRY,
      }),
    );
  }

  /**
   * Sends `messages` (of any topics) in one transaction, after the publishes before it. A publish
   * that failed for a passing reason (a connection the broker closed while the producer was idle:
   * kafkajs then writes to a socket that has ended, or looks for the transaction's coordinator over
   * it) is made once more by a new producer before the caller hears of it. Should the first one's
   * commit have reached the broker after all, the messages are there twice, as after any publish
   * the outbox relay repeats, and consumers apply each event id once.
   */
  async publish(messages: BusMessage[], options: PublishOptions): Promise<void> {
    const topics = [...new Set(messages.map((message) => message.topic))];
    const requests = produceRequests(messages);
    const attempt = () =>
      this.producer.use('publishing to Kafka', this.options.publishTimeoutMs ?? 30000, async (producer) => {
        await this.topics.ensureTopics(topics);
        const transaction = await producer.transaction();
        try {
          for (const topicMessages of requests) await transaction.sendBatch({ acks: -1, topicMessages });
          await options.beforeCommit?.();
          await transaction.commit();
        } catch (error) {
          await transaction.abort().catch(() => undefined);
          throw error;
        }
      });
    // The second attempt keeps this publish's turn, so nothing published after it overtakes it.
    const turn = this.publishing.then(() =>
      attempt().catch((error: unknown) => {
        // A broker's answer or our own time-out is the caller's to hear; a connection lost is not.
        if (!isRetriableKafkaError(error) || error instanceof KafkaTimeoutError) throw error;
        this.topics.forgetTopics();
        return attempt();
      }),
    );
    this.publishing = turn.catch(() => undefined);
    try {
      await turn;
    } catch (error) {
      // The producer is replaced: after exhausted retries its sequence numbers may no longer match
      // the broker's. The topics are checked again in case the cluster itself was replaced.
      this.topics.forgetTopics();
      throw error;
    }
  }

  close(): Promise<void> {
    return this.producer.close();
  }
}
