/** Picks the bus for this process: Kafka when brokers are configured, the in-process bus otherwise. */
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { EventBus } from './bus';
import { KafkaBus } from './kafka';
import { MemoryBus } from './memory-bus';

export function createEventBus(config: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'> & Partial<Pick<Config, 'kafkaPartitions'>>, logger: Logger): EventBus {
  if (config.kafkaBrokers && config.kafkaBrokers.length > 0) {
    return new KafkaBus({ brokers: config.kafkaBrokers, clientId: config.kafkaClientId, numPartitions: config.kafkaPartitions, logger });
  }
  return new MemoryBus();
}
