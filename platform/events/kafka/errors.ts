/**
 * Which Kafka errors only mean "not now" (a broker still starting, a coordinator loading, a topic
 * not served yet) rather than that we asked something wrong: the start-up waits them out, and a
 * consumer they stop is started again with a warning instead of an error.
 */
import { KafkaTimeoutError } from './connection';

/**
 * kafkajs names every failed coordinator lookup `KafkaJSGroupCoordinatorNotFound` and drops the cause
 * (a coordinator still loading, a request that timed out on a busy broker); it is not a mistake of
 * ours, and a consumer that stopped on it is started again (KafkaSubscription.recover).
 */
export const PASSING_KAFKA_ERROR_NAMES = [
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
  'KafkaJSLockTimeout',
  'KafkaJSGroupCoordinatorNotFound',
];

/**
 * True when a kafkajs error says the cluster is not ready yet rather than that we asked something
 * wrong: a broker refusing connections, a coordinator still loading, a topic whose partitions are
 * still being created (`This server does not host this topic-partition`), or kafkajs giving up
 * retrying one of those. Also our own time-outs of a join or a request.
 */
export function isRetriableKafkaError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const { name, retriable } = current as Error & { retriable?: boolean };
    if (name.startsWith('KafkaJS') && retriable === true) return true;
    if (PASSING_KAFKA_ERROR_NAMES.includes(name)) return true;
    if (current instanceof KafkaTimeoutError) return true;
    current = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
  }
  return false;
}

/** How many recoveries in a row a passing error may cause before the stop is reported as an error. */
export const PASSING_RECOVERIES = 3;

/** Whether a consumer's stop, the `recoveries`-th in a row, is a passing one (a warning) rather than a crash (an error). */
export function consumerStopIsPassing(error: unknown, recoveries: number): boolean {
  return recoveries <= PASSING_RECOVERIES && isRetriableKafkaError(error);
}

/**
 * A topic that exists, or is being created, but whose partitions no broker serves yet. Other
 * retriable errors (a broker that refuses connections) are the start-up's to wait out (platform/run.ts).
 */
export function isTopicNotServedYet(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const { type } = current as Error & { type?: string };
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE') return true;
    current = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
  }
  return false;
}
