// The closing summary of .ci/run: one line per Jest run (its --json result in the folder given,
// default .tmp/ci), then the total. Exits 1 when a run is missing, failed, or skipped another number
// of tests than EXPECTED_SKIPS states, so a test that silently stops running fails CI.
//
//   node .ci/summary.js [folder]
const fs = require('node:fs');
const path = require('node:path');

/**
 * The tests each run skips on purpose. Every skip goes through test/skip.ts (describeIf, itIf):
 * a block that needs infrastructure the run does not have. Adding a test inside such a block, or
 * moving one out of it, changes these numbers: update them here, with the reason.
 */
const EXPECTED_SKIPS = {
  // SQLite and the in-process bus: 26 =
  //   15 platform/events/bus.contract.test.ts, "kafka bus": the bus contract (8) and the Kafka-only cases (7);
  //    1 platform/events/kafka/admin.test.ts: creating topics on a Kafka broker;
  //    2 platform/events/outbox.test.ts: the outbox across a stopped Kafka broker; two relays on one MySQL outbox;
  //    1 platform/database.test.ts: four processes migrating one MySQL database;
  //    1 subgraphs/auth/login-throttle.test.ts: the login throttle across two auth replicas on one MySQL database;
  //    2 test/faults/database-outage and kafka-outage: they stop a MariaDB server and a Kafka broker of their own;
  //    4 test/replicas: two processes of every service on MariaDB and Kafka (replicas 3, startup 1).
  embedded: 26,
  // MariaDB and Kafka, test/replicas left to the next run: everything runs.
  full: 0,
  // test/replicas alone, on MariaDB and Kafka: everything runs.
  replicas: 0,
  // The embedded run again on Node 26: the same 26 as embedded, nothing skipped for the runtime.
  'embedded-node26': 26,
};

const folder = process.argv[2] ?? path.join('.tmp', 'ci');
const total = { passed: 0, failed: 0, skipped: 0 };
const problems = [];
for (const [run, expected] of Object.entries(EXPECTED_SKIPS)) {
  const file = path.join(folder, `${run}.json`);
  if (!fs.existsSync(file)) {
    console.log(`${run}: no result`);
    total.failed += 1;
    problems.push(`${run}: no result (${file})`);
    continue;
  }
  const result = JSON.parse(fs.readFileSync(file, 'utf8'));
  const failed = result.numFailedTests + result.numRuntimeErrorTestSuites;
  const skipped = result.numPendingTests;
  console.log(`${run}: ${result.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
  total.passed += result.numPassedTests;
  total.failed += failed;
  total.skipped += skipped;
  if (failed > 0) problems.push(`${run}: ${failed} failed`);
  if (skipped !== expected) {
    const why = skipped > expected ? 'a test that ran is skipped now' : 'a test that was skipped runs now';
    problems.push(`${run} run: ${skipped} tests skipped, ${expected} expected (${why}: find it, or update EXPECTED_SKIPS in .ci/summary.js)`);
  }
}
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
for (const problem of problems) console.error(problem);
process.exitCode = problems.length > 0 ? 1 : 0;
