/**
 * No usable default secrets (issue 18, finding 2; CONTRACT §1.2). `npm start` with a real Stripe key
 * but no webhook secret used to take the simulator's well-known webhook secret, so anyone could sign
 * `payment_intent.succeeded`; now it refuses to start, naming the variable, as a lone service does
 * without INTERNAL_API_KEY. The embedded default keeps its simulator and its generated internal key.
 * (docker-compose's side, `${VAR:?}` and .env.example, is checked in test/docker-compose.test.ts.)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../platform/config';

const REPO = path.resolve(__dirname, '../..');

/** Runs an entry point from the sources with only `env`; resolves with its exit code and output once it exits. */
function run(entry: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['-r', path.join(REPO, 'test/faults/register-ts.js'), path.join(REPO, entry)], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('a process started with a real Stripe key and no STRIPE_WEBHOOK_SECRET', () => {
  it('npm start (the embedded default) refuses to start, naming STRIPE_WEBHOOK_SECRET', async () => {
    const started = await run('scripts/start.ts', { STRIPE_SECRET_KEY: 'sk_live_real_account_key', DATA_DIR: path.join(REPO, '.tmp', 'never-created') });
    expect(started.code).toBe(1);
    expect(started.output).toMatch(/^Configuration error: STRIPE_WEBHOOK_SECRET must be set/m);
  }, 60_000);

  it('the payment service alone refuses to start, naming STRIPE_WEBHOOK_SECRET', async () => {
    const started = await run('subgraphs/payment/main.ts', { STRIPE_SECRET_KEY: 'sk_live_real_account_key', INTERNAL_API_KEY: 'an-internal-key-from-the-operator' });
    expect(started.code).toBe(1);
    expect(started.output).toMatch(/^Configuration error: STRIPE_WEBHOOK_SECRET must be set/m);
  }, 60_000);

  it('the configuration says the same for every service, embedded or not', () => {
    for (const embedded of [true, false]) {
      expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_account', INTERNAL_API_KEY: 'k' }, { embedded })).toThrow(ConfigError);
      expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_account', INTERNAL_API_KEY: 'k' }, { embedded })).toThrow(/STRIPE_WEBHOOK_SECRET/);
    }
  });
});

describe('a lone service without INTERNAL_API_KEY', () => {
  it('refuses to start, naming INTERNAL_API_KEY', async () => {
    const started = await run('subgraphs/user/main.ts', {});
    expect(started.code).toBe(1);
    expect(started.output).toMatch(/^Configuration error: INTERNAL_API_KEY must be set/m);
  }, 60_000);
});

describe('the embedded default', () => {
  it('uses the simulator and its webhook secret only when no Stripe key is given, and generates the internal key', () => {
    const simulated = loadConfig({}, { embedded: true });
    expect(simulated.stripe.apiUrl).toBe(`http://127.0.0.1:${simulated.stripe.simulatorPort}`);
    expect(simulated.stripe.webhookSecret).toEqual(expect.any(String));
    expect(simulated.internalApiKey).not.toBe(loadConfig({}, { embedded: true }).internalApiKey);

    const real = loadConfig({ STRIPE_SECRET_KEY: 'sk_test_account', STRIPE_WEBHOOK_SECRET: 'whsec_account_endpoint' }, { embedded: true });
    expect(real.stripe).toMatchObject({ secretKey: 'sk_test_account', webhookSecret: 'whsec_account_endpoint', apiUrl: undefined });
  });
});
