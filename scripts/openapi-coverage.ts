/**
 * Sums what the test run checked against the OpenAPI document: each Jest worker writes its tally to
 * .tmp/openapi-coverage/<pid>.json (test/openapi/environment.ts). One line per folder given (default
 * .tmp/openapi-coverage); `--missing` also lists the documented responses no test received.
 *
 *   node dist/scripts/openapi-coverage.js [--missing] [folder ...]
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadOpenApiDocument, operationsOf } from '../rest-compat/openapi';

interface Tally {
  validated: number;
  exempt: number;
  violations: number;
  responses: Record<string, number>;
}

const root = path.resolve(__dirname, '..', '..');
const args = process.argv.slice(2);
const listMissing = args.includes('--missing');
const folders = args.filter((arg) => arg !== '--missing');
if (folders.length === 0) folders.push(path.join(root, '.tmp', 'openapi-coverage'));

const document = loadOpenApiDocument();
const documented = Object.entries(document.paths).flatMap(([template, item]) =>
  operationsOf(item).flatMap(([method, operation]) => Object.keys(operation.responses).map((status) => `${method.toUpperCase()} ${template} ${status}`)),
);
const operations = new Set(documented.map((key) => key.slice(0, key.lastIndexOf(' '))));

let failed = false;
for (const folder of folders) {
  const files = fs.existsSync(folder) ? fs.readdirSync(folder).filter((file) => file.endsWith('.json')) : [];
  if (files.length === 0) {
    console.log(`openapi ${path.basename(folder)}: no tally found (did the tests run?)`);
    failed = true;
    continue;
  }
  const total: Tally = { validated: 0, exempt: 0, violations: 0, responses: {} };
  for (const file of files) {
    const tally = JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8')) as Tally;
    total.validated += tally.validated;
    total.exempt += tally.exempt;
    total.violations += tally.violations;
    for (const [key, count] of Object.entries(tally.responses)) total.responses[key] = (total.responses[key] ?? 0) + count;
  }
  const exercised = documented.filter((key) => total.responses[key]);
  const exercisedOperations = new Set(exercised.map((key) => key.slice(0, key.lastIndexOf(' '))));
  console.log(
    `openapi ${path.basename(folder)}: ${total.validated} answers validated against rest-compat/openapi.yaml, ${total.violations} violations, ` +
      `${total.exempt} non-REST exempt; ${exercised.length} of ${documented.length} documented responses and ` +
      `${exercisedOperations.size} of ${operations.size} operations exercised`,
  );
  if (listMissing) for (const key of documented.filter((candidate) => !total.responses[candidate])) console.log(`  never received: ${key}`);
  if (total.violations > 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
