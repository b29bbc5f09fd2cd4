/**
 * The Kafka adapter: the full setup's event bus, through kafkajs. Only this folder imports kafkajs
 * (eslint.config.mjs holds it to that), so the client can be swapped without touching a service.
 */
export { KafkaBus, type KafkaBusOptions } from './bus';
export type { GroupMember, PartitionLag } from './admin';
export { isRetriableKafkaError } from './errors';
