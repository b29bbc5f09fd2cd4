/**
 * kafkajs's log lines in ours: written through our pino logger, tagged with the kafkajs component
 * that spoke, at our logger's level, and a failure that only means "not yet" at warn, not error.
 */
import { logLevel as KafkaLogLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../../logger';
import { PASSING_KAFKA_ERROR_NAMES } from './errors';

const { DEBUG, INFO, WARN, ERROR, NOTHING } = KafkaLogLevel;
const KAFKA_LEVELS: Record<string, KafkaLogLevel> = { trace: DEBUG, debug: DEBUG, info: INFO, warn: WARN, error: ERROR, fatal: ERROR, silent: NOTHING };
const PINO_METHODS = { [ERROR]: 'error', [WARN]: 'warn', [INFO]: 'info', [DEBUG]: 'debug', [NOTHING]: 'debug' } as const;

/** The broker's answers that only mean "not yet" (kafkajs retries them) or "already done". */
// kafkajs keeps its table of protocol errors (code, message, retriable) in a module it does not re-export.
const { errorCodes } = require('kafkajs/src/protocol/error') as { errorCodes: { message: string; retriable: boolean }[] };
const PASSING_KAFKA_ERRORS = new Set([
  ...errorCodes.filter((code) => code.retriable).map((code) => code.message),
  'Topic with this name already exists',
  // A heartbeat or commit answered while the group rebalances: the consumer rejoins, as it should.
  'The group is rebalancing, so a rejoin is needed',
  // Several topics' answers in one: kafkajs's admin takes them all "already exists" as done, and
  // throws anything else to our caller, which logs it.
  'Topic creation errors',
]);

/** kafkajs restarts a consumer that stopped on a retriable error; the restart is the recovery. */
const RESTARTING_CONSUMER = 'Restarting the consumer in ';

/** kafkajs's producer reports a send it is about to retry with the broker's message after this. */
const RETRIED_SEND = 'Failed to send messages: ';

/** The kafkajs log level that lets through what our logger's level does. */
export function kafkaLogLevel(logger: Logger): KafkaLogLevel {
  return KAFKA_LEVELS[logger.level] ?? INFO;
}

/** kafkajs logs through our pino logger, tagged with the kafkajs component that spoke. */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log as { message: string; [key: string]: unknown };
      // We limit the idempotent producer's retries on purpose (producer.ts) and the consumers are
      // idempotent, so kafkajs's exactly-once warning is noise. A request answered with an error
      // kafkajs retries (a topic not served yet, a concurrent transaction step, also when the
      // producer reports it as a failed send it retries), or told that a topic exists already, is
      // not a failure of ours: it is logged, but not at error level. A send that runs out of retries
      // fails the publish, and the outbox relay logs that.
      const reported = typeof fields.error === 'string' ? fields.error : message.startsWith(RETRIED_SEND) ? message.slice(RETRIED_SEND.length) : message;
      const transient = level === ERROR && (PASSING_KAFKA_ERRORS.has(reported) || isPassingCrash(message) || message.startsWith(RESTARTING_CONSUMER));
      const method = message.startsWith('Limiting retries for the idempotent producer') ? 'debug' : transient ? 'warn' : PINO_METHODS[level];
      logger[method]({ kafka: namespace, ...fields }, message);
    };
}

/**
 * kafkajs's own line for a consumer that stopped (`Crash: <name>: <message>`), when the error only
 * means "not now": a passing error by its name, or a broker answer kafkajs retries (the group's
 * coordinator still loading after a broker start).
 */
function isPassingCrash(message: string): boolean {
  if (!message.startsWith('Crash: ')) return false;
  const [name, ...rest] = message.slice('Crash: '.length).split(': ');
  return PASSING_KAFKA_ERROR_NAMES.includes(name) || (name === 'KafkaJSProtocolError' && PASSING_KAFKA_ERRORS.has(rest.join(': ')));
}
