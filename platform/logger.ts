/**
 * The one logger: pino, structured JSON on stdout. Services take a child carrying their name; every
 * line written during a request carries its `requestId`, and during an event's handling its
 * `eventId`, read from the request context (platform/request-context.ts), whichever logger wrote it;
 * with tracing on, also the `trace_id` and `span_id` of the span it was written in.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { contextLogFields } from './request-context';
import { traceLogFields } from './telemetry/spans';

export type { DestinationStream, Logger };

/**
 * Errors as pino serializes them, less a failed query's parameters (whatever the caller bound) and
 * with the SQL cut short: a batch's query can hold thousands of ids.
 */
function errorSerializer(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (!serialized || typeof serialized !== 'object') return serialized;
  const { parameters: _parameters, driverError: _driverError, ...rest } = serialized;
  for (const key of ['query', 'sql']) {
    const text = rest[key];
    if (typeof text === 'string' && text.length > 300) rest[key] = `${text.slice(0, 300)}…`;
  }
  return rest;
}

/** `destination` defaults to stdout; tests hand a stream that keeps the lines, to read what was logged. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: bindings,
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: errorSerializer },
    mixin: () => ({ ...contextLogFields(), ...traceLogFields() }),
    // Secrets never reach the log, whatever object a caller hands over.
    redact: {
      paths: [
        'password',
        '*.password',
        'refreshToken',
        '*.refreshToken',
        'accessToken',
        '*.accessToken',
        'authorization',
        '*.authorization',
        'headers.authorization',
        'req.headers.authorization',
        'clientSecret',
        '*.clientSecret',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
