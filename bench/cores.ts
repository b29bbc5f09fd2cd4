/**
 * Our gateway beside `grafbase dev` at equal cores, on the four GraphQL paths of the gateway
 * benchmark (bench/gateway-paths.ts), over the same services (bench/services.ts):
 *
 * - **one core**: ours as one process and grafbase, each pinned to the same one CPU (`taskset -a`,
 *   every thread of the process), so each has one core's worth of time whatever it does with it;
 * - **all cores**: ours with `GATEWAY_WORKERS=auto` (one worker per core, platform/workers.ts) and
 *   grafbase as it runs by default (a thread per core), neither pinned; and ours as one process,
 *   unpinned, as the gateway benchmark runs it.
 *
 * The four gateways take turns in the same rounds (bench/gateway.ts `measure`), every answer checked
 * against the first, and the services and the load tool, unpinned, share the machine with them as in
 * the gateway benchmark. The ratio is ours ÷ grafbase within each pair.
 *
 * `node dist/bench/cores.js [seconds=10]` (grafbase must be installed: bench/ladder.ts says how).
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { paths, QUERIES, type Target } from './gateway-paths';
import { measure, type Row } from './gateway';
import { GRAFBASE_INSTALL, startGrafbase } from './ladder';
import { startOurGateway, withServices } from './peers';
import { freePort, stopGroup, type Started } from './processes';

const PINNED_CPU = String(os.availableParallelism() - 1);

const TARGETS = {
  oursOne: 'ours, 1 core',
  grafbaseOne: 'grafbase dev, 1 core',
  oursAll: 'ours, all cores',
  grafbaseAll: 'grafbase dev, all cores',
  oursUnpinned: 'ours, one worker, all cores',
} as const;

/** Every thread of the process, now and later, on `cpu` alone. */
function pin(started: Started, cpu: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpu, String(started.child.pid)], { stdio: 'ignore' });
}

export async function coresBench(seconds = 10) {
  return withServices(async (services, dir, servicesProcess) => {
    const running: Started[] = [];
    try {
      const [oursOnePort, grafbaseOnePort, oursAllPort, grafbaseAllPort, oursUnpinnedPort] = [
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
      ];
      const oursOne = await startOurGateway(services, oursOnePort);
      running.push(oursOne);
      const oursAll = await startOurGateway(services, oursAllPort, [], true, { GATEWAY_WORKERS: 'auto' });
      running.push(oursAll);
      const oursUnpinned = await startOurGateway(services, oursUnpinnedPort);
      running.push(oursUnpinned);
      const grafbaseOne = await startGrafbase(services, grafbaseOnePort, dir);
      if (!grafbaseOne) throw new Error(`grafbase is not installed: ${GRAFBASE_INSTALL}`);
      running.push(grafbaseOne);
      const grafbaseAll = await startGrafbase(services, grafbaseAllPort, dir);
      if (!grafbaseAll) throw new Error(`grafbase is not installed: ${GRAFBASE_INSTALL}`);
      running.push(grafbaseAll);
      pin(oursOne, PINNED_CPU);
      pin(grafbaseOne, PINNED_CPU);

      const urls = {
        [TARGETS.oursOne]: `http://127.0.0.1:${oursOnePort}`,
        [TARGETS.grafbaseOne]: `http://127.0.0.1:${grafbaseOnePort}`,
        [TARGETS.oursAll]: `http://127.0.0.1:${oursAllPort}`,
        [TARGETS.grafbaseAll]: `http://127.0.0.1:${grafbaseAllPort}`,
        [TARGETS.oursUnpinned]: `http://127.0.0.1:${oursUnpinnedPort}`,
      };
      const { [TARGETS.oursOne]: ours, ...others } = urls;
      // Every gateway's answer to every query is checked against ours here, and each later answer against its first.
      const targets = await paths({ services, ours, ladder: others });
      const named = (list: Target[]) => list.map((t) => (t.target === 'ours' ? { ...t, target: TARGETS.oursOne } : t));
      const charged = {
        gateways: {
          [TARGETS.oursOne]: oursOne,
          [TARGETS.grafbaseOne]: grafbaseOne,
          [TARGETS.oursAll]: oursAll,
          [TARGETS.grafbaseAll]: grafbaseAll,
          [TARGETS.oursUnpinned]: oursUnpinned,
        },
        services: servicesProcess,
      };
      const rows: Record<string, Row[]> = {};
      for (const name of Object.keys(QUERIES) as (keyof typeof QUERIES)[]) rows[name] = await measure(named(targets[name]), seconds, charged);
      return {
        bench: 'cores',
        seconds,
        cores: os.availableParallelism(),
        pinnedCpu: PINNED_CPU,
        loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        rows,
        table: coresTable(rows),
      };
    } finally {
      for (const started of running.reverse()) await stopGroup(started);
    }
  });
}

function coresTable(rows: Record<string, Row[]>): string {
  const lines = ['| Query | cores | ours req/s | grafbase req/s | ours ÷ grafbase | CPU µs/request ours · grafbase | bad answers |', '|---|---|---|---|---|---|---|'];
  for (const [name, list] of Object.entries(rows)) {
    const row = (target: string) => list.find((r) => r.target === target);
    for (const [cores, ours, grafbase] of [
      ['1', row(TARGETS.oursOne), row(TARGETS.grafbaseOne)],
      ['all', row(TARGETS.oursAll), row(TARGETS.grafbaseAll)],
      ['all, ours one worker', row(TARGETS.oursUnpinned), row(TARGETS.grafbaseAll)],
    ] as const) {
      if (!ours || !grafbase) continue;
      const bad = [ours, grafbase].reduce((sum, r) => sum + r.non2xx + r.errors + r.mismatches, 0);
      const ratio = (ours.requestsPerSecond / grafbase.requestsPerSecond).toFixed(2);
      lines.push(
        `| ${name} | ${cores} | ${ours.requestsPerSecond} | ${grafbase.requestsPerSecond} | ${ratio} | ${ours.cpuUsPerRequest?.gateway ?? '–'} · ${grafbase.cpuUsPerRequest?.gateway ?? '–'} | ${bad} |`,
      );
    }
  }
  return lines.join('\n');
}

if (require.main === module) {
  const seconds = Number(process.argv[2]) || Number(process.env.BENCH_SECONDS) || undefined;
  coresBench(seconds).then(
    (result) => {
      process.stderr.write(`${result.table}\n`);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
