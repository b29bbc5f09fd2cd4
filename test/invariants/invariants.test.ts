/**
 * The money invariants under a seeded, concurrent workload (CONTRACT §5–§8, STYLE rule 16): checkouts,
 * payments, declines, cancels in bursts, admin status changes, duplicated and reordered webhooks,
 * provider faults (passing 500s, and refunds refused for good that an admin retries), admin partial
 * refunds (two at once, or racing a cancel), rushes of customers for a book's last copies, pays
 * racing the expiry of their stock hold, admin stock changes, in waves run at once, then checked
 * against the simulator's ledger. A failure prints its seed and a shrunk operation list; `npm run soak` runs the
 * same workload for longer.
 */
import { runConfig } from '../stack';
import { runSeed } from './report';

const FULL = Boolean(runConfig.dbUrl && runConfig.kafkaBrokers);

describe('money invariants under a concurrent, seeded workload', () => {
  it.each(process.env.INVARIANT_SEEDS ? process.env.INVARIANT_SEEDS.split(',').map(Number) : [20260101, 7])(
    'hold for seed %i',
    async (seed) => {
      const outcome = await runSeed(seed, 200, { restarts: FULL, shrink: { maxAttempts: 6, deadline: Date.now() + 90_000 } });
      const { ran, durationMs, checked, truth } = outcome.result;
      console.log(
        `invariants: seed ${seed}, ${ran} operations in ${durationMs} ms, checked ${JSON.stringify(checked)}, faults ${JSON.stringify(truth.faults)}, stock ${JSON.stringify(truth.stock)}, partial refunds ${JSON.stringify(truth.answersTo('partialRefund'))}`,
      );
      if (outcome.failure) console.log(outcome.failure);
      expect(outcome.failure).toBeUndefined();
    },
    300_000,
  );
});
