/**
 * What forgot-password tells by its timing: the latency of `POST /auth/password/forgot` for an
 * address an account has and for one none has, asked in turns, one request at a time, with the mail
 * sender delivering to a local mailbox meanwhile; and the share of single requests that a threshold
 * halfway between the two medians tells apart (50 %: the timing tells nothing).
 */
import 'reflect-metadata';
import request from 'supertest';
import { startMailbox } from '../test/mailbox';
import { newUser, registeredUser, startStack } from '../test/stack';
import { percentile } from './measure';

const WARMUP = 50;

export async function forgotPasswordBench(requests = 1000) {
  const { mailbox, env } = await startMailbox();
  // The per-address limit out of the way: every request is answered 202.
  const stack = await startStack({ env: { ...env, LOG_LEVEL: 'warn', LOGIN_THROTTLE_MAX_FAILURES: String(2 * (requests + WARMUP)) } });
  try {
    const addresses = { known: (await registeredUser(stack)).email, unknown: newUser().email };
    const times: Record<keyof typeof addresses, number[]> = { known: [], unknown: [] };
    for (let i = 0; i < WARMUP + requests; i += 1) {
      for (const which of ['known', 'unknown'] as const) {
        const began = performance.now();
        const res = await request(stack.urls.auth).post('/auth/password/forgot').send({ email: addresses[which] });
        const ms = performance.now() - began;
        if (res.status !== 202) throw new Error(`forgot-password answered ${res.status}`);
        if (i >= WARMUP) times[which].push(ms);
      }
    }
    const median = { known: percentile(times.known, 50), unknown: percentile(times.unknown, 50) };
    const threshold = (median.known + median.unknown) / 2;
    const slower = median.known >= median.unknown ? 'known' : 'unknown';
    const told = times.known.filter((ms) => ms > threshold === (slower === 'known')).length + times.unknown.filter((ms) => ms > threshold === (slower === 'unknown')).length;
    const figures = (values: number[]) => ({ p50: round(percentile(values, 50)), p90: round(percentile(values, 90)) });
    return {
      bench: 'forgot-password',
      database: stack.config.dbUrl ? 'mysql' : 'sqlite',
      requests,
      knownMs: figures(times.known),
      unknownMs: figures(times.unknown),
      toldApart: Number((told / (2 * requests)).toFixed(3)),
    };
  } finally {
    await stack.stop();
    await mailbox.stop();
  }
}

const round = (ms: number) => Number(ms.toFixed(2));

if (require.main === module) {
  forgotPasswordBench(Number(process.argv[2]) || undefined).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
