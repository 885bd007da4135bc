import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

// `casework worker` run as its own process, the way production runs it, so the soak can kill
// it outright. It is started in a process group of its own (detached), and a kill goes to the
// whole group: the bin/casework wrapper and the node process under it die together, as they
// would when a machine or container dies. Every group still alive when this process exits is
// killed from the 'exit' handler, so a failing soak leaves no worker polling.

const ROOT = join(__dirname, '../../..');
/** The line `casework worker` prints once it polls. */
const READY = /casework worker on task queue/;

/** Process groups this process started and has not seen exit; killed on exit. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Kills every process group still registered (synchronous: safe in an 'exit' handler). */
export function killAllGroups(): void {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  liveGroups.clear();
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllGroups);
}

/** The line that says why a worker exited: its "casework worker:" message or the first error line. */
export function exitReason(output: string): string {
  const lines = output.split('\n').map((l) => l.trim());
  const own = lines.find((l) => l.startsWith('casework worker:') || l.startsWith('error:'));
  const thrown = lines.find((l) => /^[A-Z]\w*Error\b.*:/.test(l) || /^Error:/.test(l));
  const unhandled = lines.some((l) => l.includes("Unhandled 'error' event"));
  const text = own ?? (thrown ? `${unhandled ? "unhandled 'error' event: " : ''}${thrown}` : 'exited without an error message');
  // Ports and ids differ from exit to exit; the reason should not.
  return text.replace(/\d+\.\d+\.\d+\.\d+:\d+/g, '<host:port>').slice(0, 160);
}

/** A supervised worker process: restarted whenever it exits, until stopped. */
export interface WorkerProcess {
  /** True while the current process has said it polls. */
  readonly ready: boolean;
  /** Starts so far (the first one included). */
  readonly starts: number;
  /** Exits the soak did not cause (a crash, or a worker that could not start during an outage). */
  readonly unplannedExits: number;
  /** Why those workers exited, as their last error line said, with how often. */
  readonly exitReasons: Map<string, number>;
  /** Resolves once a worker polls, or rejects after timeoutMs. */
  waitReady(timeoutMs: number): Promise<void>;
  /** SIGKILLs the worker's process group; the supervisor starts a new one after restartDelayMs. */
  kill(restartDelayMs: number): void;
  /** Stops supervising and kills the worker. */
  stop(): Promise<void>;
  /** Stops supervising and sends SIGTERM, as a rolling restart does; SIGKILL if it has not exited after `graceMs`. */
  terminate(graceMs: number): Promise<void>;
}

/** What to supervise besides `casework worker`: another casework command, and the output line that says it serves. */
export interface SupervisedCommand {
  /** The arguments after bin/casework (default: worker). */
  args?: string[];
  /** Output that says the process is ready (default: the worker's polling line). */
  ready?: RegExp;
  /** Its name in the log and in errors (default: worker). */
  name?: string;
}

/** Starts `bin/casework worker` (or `command`) with `env` and keeps one running; output goes to `logFile`. */
export function superviseWorker(env: NodeJS.ProcessEnv, logFile: string, options: { restartAfterExitMs?: number; command?: SupervisedCommand } = {}): WorkerProcess {
  const args = options.command?.args ?? ['worker'];
  const readyLine = options.command?.ready ?? READY;
  const name = options.command?.name ?? 'worker';
  installExitHook();
  const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
  let child: ChildProcess | undefined;
  let ready = false;
  let starts = 0;
  let unplannedExits = 0;
  const exitReasons = new Map<string, number>();
  let stopped = false;
  let killedOnPurpose = false;
  let restartTimer: NodeJS.Timeout | undefined;
  const waiters: (() => void)[] = [];

  const start = () => {
    if (stopped) return;
    starts += 1;
    ready = false;
    killedOnPurpose = false;
    log.write(`\n--- soak: ${name} start ${starts} at ${new Date().toISOString()}\n`);
    const proc = spawn(process.execPath, [join(ROOT, 'bin/casework'), ...args], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    if (proc.pid) liveGroups.add(proc.pid);
    let tail = '';
    const onOutput = (chunk: Buffer) => {
      log.write(chunk);
      tail = (tail + chunk.toString()).slice(-4000);
      if (!ready && readyLine.test(chunk.toString())) {
        ready = true;
        waiters.splice(0).forEach((w) => w());
      }
    };
    proc.stdout?.on('data', onOutput);
    proc.stderr?.on('data', onOutput);
    proc.once('exit', (code, signal) => {
      if (proc.pid) liveGroups.delete(proc.pid);
      // The wrapper may exit before its child: make sure the group is gone.
      try {
        if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      log.write(`--- soak: ${name} exited (code ${code}, signal ${signal}) at ${new Date().toISOString()}\n`);
      if (child === proc) {
        child = undefined;
        ready = false;
        if (!killedOnPurpose) {
          unplannedExits += 1;
          const reason = exitReason(tail);
          exitReasons.set(reason, (exitReasons.get(reason) ?? 0) + 1);
          if (!stopped) restartTimer = setTimeout(start, options.restartAfterExitMs ?? 2_000);
        }
      }
    });
  };

  start();
  return {
    get ready() {
      return ready;
    },
    get starts() {
      return starts;
    },
    get unplannedExits() {
      return unplannedExits;
    },
    exitReasons,
    waitReady(timeoutMs) {
      if (ready) return Promise.resolve();
      return new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => reject(new Error(`the ${name} was not ready within ${timeoutMs / 1000} s (see ${logFile})`)), timeoutMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolvePromise();
        });
      });
    },
    kill(restartDelayMs) {
      const proc = child;
      if (!proc?.pid) return;
      killedOnPurpose = true;
      ready = false;
      child = undefined;
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      liveGroups.delete(proc.pid);
      clearTimeout(restartTimer);
      restartTimer = setTimeout(start, restartDelayMs);
    },
    async terminate(graceMs) {
      stopped = true;
      clearTimeout(restartTimer);
      const proc = child;
      if (proc?.pid && proc.exitCode === null) {
        killedOnPurpose = true;
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        // To the wrapper alone: it passes SIGTERM on to the node process under it, which drains.
        try {
          process.kill(proc.pid, 'SIGTERM');
        } catch {
          // already gone
        }
        const timer = setTimeout(() => {
          try {
            process.kill(-proc.pid!, 'SIGKILL');
          } catch {
            // already gone
          }
        }, graceMs);
        await exited;
        clearTimeout(timer);
      }
      child = undefined;
      await new Promise<void>((r) => log.end(() => r()));
    },
    async stop() {
      stopped = true;
      clearTimeout(restartTimer);
      const proc = child;
      child = undefined;
      if (proc?.pid && proc.exitCode === null) {
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        try {
          process.kill(-proc.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        await exited;
      }
      await new Promise<void>((r) => log.end(() => r()));
    },
  };
}
