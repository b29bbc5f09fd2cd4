/**
 * The one logger: pino, structured JSON on stdout. Services take a child carrying their name;
 * request handlers use a child carrying the request id.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: bindings,
    timestamp: pino.stdTimeFunctions.isoTime,
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
  });
}
