/**
 * The book service as its main.ts starts it, but with a token verifier that fails outside any
 * promise chain the request awaits: for the bearer `throw` it throws from a timer (an uncaught
 * exception), for `reject` it leaves a rejected promise nobody awaits (an unhandled rejection). The
 * request itself is refused 401 either way. For crash.test.ts, spawned through process.ts.
 */
import { unauthenticated } from '../../platform/errors';
import { runAlone } from '../../platform/run';
import { createBookService } from '../../subgraphs/book';

void runAlone('book', (deps) =>
  createBookService({
    ...deps,
    verifier: {
      async verify(token) {
        if (token === 'throw') {
          setTimeout(() => {
            throw new Error('thrown from a timer the request started');
          }, 0);
        }
        if (token === 'reject') void Promise.reject(new Error('rejected and never awaited'));
        throw unauthenticated();
      },
    },
  }),
);
