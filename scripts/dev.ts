/**
 * `npm run dev`: the embedded system of `npm start` (dist/scripts/start.js), restarted when a source
 * file changes, without a full rebuild. The npm script compiles incrementally into dist/ before this
 * starts the system; then `tsc --watch` recompiles what changes (tsc, not an esbuild-based runner,
 * because TypeORM and class-validator read the decorator metadata only tsc emits), the files
 * copy-graphql.ts copies are copied again when they change, and the system is stopped with SIGTERM,
 * as Ctrl-C stops it, and started again once it has exited and freed its ports. A compile with
 * errors is reported and leaves the running system as it is. The admin UI is built once at start
 * when dist/admin is missing or older than its sources (for work on the UI itself, docs/admin-ui.md).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_DIST_DIR } from '../gateway/admin-static';
import { adminBuildIsFresh } from './admin-build';
import { copyToDist, root, runTimeFiles } from './copy-graphql';

/** Beyond the system's own bound on a graceful stop (STOP_BOUND_MS in platform/run.ts, 25 s): then it is killed. */
const STOP_WAIT_MS = 30_000;
/** The incremental state `npm run dev` starts from; inside dist/, so removing dist/ forgets it too. */
const BUILD_INFO = path.join('dist', 'dev.tsbuildinfo');
/** tsc's line at the end of each compile in watch mode. */
const COMPILED = /Found (\d+) errors?\. Watching for file changes\./;

const say = (line: string) => process.stderr.write(`[dev] ${line}\n`);

let system: ChildProcess | undefined;
/** When the running system was started: a compile that wrote nothing since needs no restart. */
let systemStartedAt = 0;
let restarting: Promise<void> | undefined;
let restartAgain = false;
let leaving = false;

function startSystem(): void {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'scripts', 'start.js')], { cwd: root, stdio: 'inherit' });
  system = child;
  systemStartedAt = Date.now();
  child.once('exit', (code, signal) => {
    if (system !== child) return;
    system = undefined;
    if (!leaving) say(`the system exited (${signal ?? `code ${code}`}); it starts again after the next change`);
  });
}

/**
 * Stops the system and waits for its exit (its ports are free then): with SIGTERM, or with no
 * signal when it has one already (Ctrl-C reaches the whole process group, and a second signal would
 * cut its graceful stop short). SIGKILL past STOP_WAIT_MS.
 */
async function stopSystem(signal: NodeJS.Signals | undefined = 'SIGTERM'): Promise<void> {
  const child = system;
  if (!child) return;
  system = undefined;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (signal) child.kill(signal);
  const kill = setTimeout(() => child.kill('SIGKILL'), STOP_WAIT_MS);
  await exited;
  clearTimeout(kill);
}

/** One restart at a time; a change that lands during one restarts the system once more after it. */
function restart(why: string): void {
  if (leaving) return;
  if (restarting) {
    restartAgain = true;
    return;
  }
  restarting = (async () => {
    do {
      restartAgain = false;
      say(`${why}: ${system ? 'restarting' : 'starting'} the system`);
      await stopSystem();
      if (leaving) return;
      startSystem();
    } while (restartAgain);
  })().finally(() => (restarting = undefined));
}

/** Whether tsc wrote a file of the server (the admin UI's build aside) in `dir` after `since`. */
function compiledSince(since: number, dir = path.join(root, 'dist')): boolean {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() ? full !== ADMIN_DIST_DIR && compiledSince(since, full) : entry.name.endsWith('.js') && fs.statSync(full).mtimeMs > since) return true;
  }
  return false;
}

function buildAdminOnce(): void {
  if (adminBuildIsFresh()) return;
  say('building the admin UI (dist/admin is missing or older than gateway/admin)');
  const built = spawnSync('npm', ['run', '--silent', 'build:admin'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) say('the admin UI did not build; /admin answers 503 until it does');
}

function watchRunTimeFiles(): void {
  for (const file of runTimeFiles()) {
    copyToDist(file);
    // Polled rather than fs.watch: editors that save by replacing the file would end an inotify watch.
    fs.watchFile(path.join(root, file), { interval: 300 }, (current, previous) => {
      if (current.mtimeMs === previous.mtimeMs) return;
      copyToDist(file);
      restart(`${file} changed`);
    });
  }
}

function watchSources(): ChildProcess {
  const tsc = spawn(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput', '--incremental', '--tsBuildInfoFile', BUILD_INFO],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let pending = '';
  tsc.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() !== '') process.stderr.write(`[tsc] ${line}\n`);
      const compiled = COMPILED.exec(line);
      if (!compiled) continue;
      if (compiled[1] !== '0') say(`not restarting: ${compiled[1]} compile error(s) above`);
      // The first compile of the watch usually writes nothing: the npm script has just compiled.
      else if (compiledSince(systemStartedAt)) restart('compiled');
    }
  });
  tsc.once('exit', (code, signal) => {
    if (leaving || signal === 'SIGINT') return;
    say(`tsc --watch exited (${signal ?? `code ${code}`})`);
    void leave(1, 'SIGTERM');
  });
  return tsc;
}

let watcher: ChildProcess | undefined;

/** `signal`: what the system is to be stopped with, if it did not get the signal this process got. */
async function leave(exitCode: number, signal: NodeJS.Signals | undefined): Promise<void> {
  if (leaving) return;
  leaving = true;
  watcher?.kill('SIGTERM');
  await restarting;
  await stopSystem(signal);
  process.exit(exitCode);
}

// Ctrl-C reaches the system and tsc too (the same process group): the system stops itself, and this waits for it.
process.on('SIGINT', () => void leave(0, undefined));
process.on('SIGTERM', () => void leave(0, 'SIGTERM'));
buildAdminOnce();
watchRunTimeFiles();
startSystem();
watcher = watchSources();
