/** Kafka when KAFKA_BROKERS is configured, the in-process bus otherwise. */
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { EventBus } from './bus';
import { MemoryBus } from './memory-bus';

export function createEventBus(config: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, logger: Logger): EventBus {
  if (config.kafkaBrokers && config.kafkaBrokers.length > 0) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { KafkaBus } = require('./kafka-bus') as typeof import('./kafka-bus');
    return new KafkaBus({ brokers: config.kafkaBrokers, clientId: config.kafkaClientId, logger });
  }
  return new MemoryBus();
}
