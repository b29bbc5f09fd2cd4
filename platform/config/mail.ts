/** Outgoing e-mail: the SMTP server, the sender's address, the shop links in the e-mails, the retry pace, and the local mailbox of the embedded default. */
import path from 'node:path';
import { ConfigError, type EnvReader } from './env';

export interface MailConfig {
  mail: {
    /** `SMTP_URL` (smtp:// or smtps://, credentials in the URL); unset outside the embedded default: e-mails are recorded and wait. */
    smtpUrl: string | undefined;
    /** `MAIL_FROM`, the From header of every e-mail. */
    from: string;
    /** `SHOP_URL`: the shop front the links in e-mails point to (`<SHOP_URL>/reset-password?token=...`). */
    shopUrl: string;
    /** `MAIL_RETRY_BASE_MS` (1 s) doubling up to `MAIL_RETRY_MAX_MS` (5 min): the wait before sending again after a failure. */
    retryBaseMs: number;
    retryMaxMs: number;
    /** The embedded default's SMTP sink (`npm start` without SMTP_URL): its port (`MAIL_SINK_PORT`, 1025) and where it keeps what arrives. */
    localMailbox: { port: number; dir: string } | undefined;
  };
  /** `REQUIRE_VERIFIED_EMAIL` (default false): checkout answers 403 to an account whose address is not verified. */
  requireVerifiedEmail: boolean;
}

export function readMail(env: EnvReader, dataDir: string, gatewayPort: number): MailConfig {
  const configured = env.read('SMTP_URL');
  if (configured !== undefined && !/^smtps?:\/\/[^/?#]+\/?(\?.*)?$/.test(configured)) {
    throw new ConfigError(`SMTP_URL must be an smtp:// or smtps:// URL such as smtp://127.0.0.1:1025, got "${configured}"`);
  }
  const shopUrl = (env.read('SHOP_URL') ?? `http://localhost:${gatewayPort}`).replace(/\/$/, '');
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(shopUrl)) throw new ConfigError(`SHOP_URL must be an http(s) URL, got "${shopUrl}"`);
  const sinkPort = env.int('MAIL_SINK_PORT', 1025);
  const localMailbox = configured === undefined && env.embedded ? { port: sinkPort, dir: path.join(dataDir, 'mail') } : undefined;
  return {
    mail: {
      smtpUrl: configured ?? (localMailbox ? `smtp://127.0.0.1:${sinkPort}` : undefined),
      from: env.read('MAIL_FROM') ?? 'Bookstore <no-reply@bookstore.local>',
      shopUrl,
      retryBaseMs: env.int('MAIL_RETRY_BASE_MS', 1000, 1),
      retryMaxMs: env.int('MAIL_RETRY_MAX_MS', 5 * 60 * 1000, 1),
      localMailbox,
    },
    requireVerifiedEmail: env.bool('REQUIRE_VERIFIED_EMAIL', false),
  };
}
