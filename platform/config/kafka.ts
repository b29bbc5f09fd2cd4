/** The event bus: Kafka's brokers when set (the in-process bus otherwise), and the names it uses there. */
import type { EnvReader } from './env';

export interface KafkaConfig {
  kafkaBrokers: string[] | undefined;
  kafkaClientId: string;
  /** `KAFKA_PARTITIONS` (default 3): partitions of the topics a service creates; the most consumers of one group that share work. */
  kafkaPartitions: number;
  /** Prefix of every topic and consumer group, so several systems can share one broker. */
  eventNamespace: string;
}

export function readKafka(env: EnvReader): KafkaConfig {
  return {
    kafkaBrokers: env.list('KAFKA_BROKERS'),
    kafkaClientId: env.read('KAFKA_CLIENT_ID') ?? 'bookstore',
    kafkaPartitions: env.int('KAFKA_PARTITIONS', 3, 1),
    eventNamespace: env.read('EVENT_NAMESPACE') ?? '',
  };
}
