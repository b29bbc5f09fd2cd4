/**
 * Publishing to Kafka. A publish is one Kafka transaction (a transactional id per bus, reused by the
 * producer that replaces a failed one): a process killed while its batch is on the way leaves an
 * open transaction, which the broker aborts after `transactionTimeoutMs` (or at once when this bus's
 * next producer starts), and our consumers read committed messages only. So when the outbox relay
 * of a dead replica never saw the broker's acknowledgement, the copy that another relay publishes is
 * the only one consumers ever see. Publishes of one bus are made one at a time.
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
    const byTopic = new Map<string, BusMessage[]>();
    for (const message of messages) {
      const list = byTopic.get(message.topic);
      if (list) list.push(message);
      else byTopic.set(message.topic, [message]);
    }
    const topicMessages = [...byTopic].map(([topic, list]) => ({
      topic,
      messages: list.map(({ key, value, headers }) => ({ key, value, headers: { ...headers, [PUBLISHER_HEADER]: PUBLISHER } })),
    }));
    const attempt = () =>
      this.producer.use('publishing to Kafka', this.options.publishTimeoutMs ?? 30000, async (producer) => {
        await this.topics.ensureTopics([...byTopic.keys()]);
        const transaction = await producer.transaction();
        try {
          await transaction.sendBatch({ acks: -1, topicMessages });
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
