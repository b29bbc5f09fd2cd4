/**
 * The Jest environment of every test file: Node's, plus the OpenAPI response checker. Jest loads this
 * module once per worker, outside the test files' sandboxes, so the document is parsed and its schemas
 * compiled once per worker, and the tally of checked answers spans every file the worker runs. After
 * each file the tally is written to .tmp/openapi-coverage/<pid>.json (scripts/openapi-coverage.ts sums them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { TestEnvironment } from 'jest-environment-node';
import { ResponseContract } from './contract';
import { CONTRACT_GLOBAL, coverageDir, type CoverageTally, type SandboxContract } from './shared';

const contract = new ResponseContract();
const tally: CoverageTally = { pid: process.pid, validated: 0, exempt: 0, violations: 0, responses: {} };

const sandboxContract: SandboxContract = {
  check(answer) {
    try {
      const outcome = contract.check(answer);
      if (outcome.kind === 'exempt') {
        tally.exempt += 1;
      } else {
        tally.validated += 1;
        tally.responses[outcome.key] = (tally.responses[outcome.key] ?? 0) + 1;
      }
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  },
  exempt() {
    tally.exempt += 1;
  },
  violated(count) {
    tally.violations += count;
  },
};

export default class OpenApiEnvironment extends TestEnvironment {
  private readonly rootDir: string;

  constructor(...args: ConstructorParameters<typeof TestEnvironment>) {
    super(...args);
    this.rootDir = args[0].projectConfig.rootDir;
    this.global[CONTRACT_GLOBAL] = sandboxContract;
  }

  override async teardown(): Promise<void> {
    const dir = coverageDir(this.rootDir);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${process.pid}.json`), `${JSON.stringify(tally, null, 2)}\n`);
    await super.teardown();
  }
}
