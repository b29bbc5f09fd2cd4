/**
 * The processes the gateway benchmark starts: each in a process group of its own, waited for until
 * it answers, stopped with whatever it forked, and the CPU time its group used.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

export interface Started {
  child: ChildProcess;
  name: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `command` in a process group of its own (so it and whatever it forks stop together). */
export function startGroup(name: string, command: string, args: string[], env: Record<string, string | undefined>, stdout: 'pipe' | 'ignore' = 'ignore'): Started {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'inherit'], detached: true });
  return { child, name };
}

/** SIGTERM to the group, SIGKILL if it is still there after 15 s. */
export function stopGroup({ child }: Started): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const pid = child.pid;
    const kill = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }, 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}

/** Resolves once `probe` answers true; fails if the process exits or 60 s pass. */
export async function ready({ child, name }: Started, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${name} was not ready within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * CPU time (user and system, ms) the processes of a group have used so far, from Linux's /proc
 * (undefined elsewhere). A profile's samples are wall time: a process descheduled inside a socket
 * write shows that time in `writev` without spending a CPU on it, so what a request costs is read here.
 */
export function groupCpuMs({ child }: Started): number | undefined {
  if (process.platform !== 'linux' || child.pid === undefined) return undefined;
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // After "pid (comm) ": state, ppid, pgrp, …, utime (14th field), stime (15th), in clock ticks of 10 ms.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === child.pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

/** Resident memory (bytes) of the processes of a group now, from Linux's /proc (undefined elsewhere). */
export function groupRssBytes({ child }: Started): number | undefined {
  if (process.platform !== 'linux' || child.pid === undefined) return undefined;
  let kib = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    let status: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      status = fs.readFileSync(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== child.pid) continue;
    kib += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return kib * 1024;
}
