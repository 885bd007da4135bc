import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { FromCapacityWorker, ToCapacityWorker } from './capacity-worker';

// The capacity bench's side of its worker process: starting it, asking it for its cache and the
// model's time, reading its resident memory from /proc, and stopping it.

/** The child's resident set, from /proc/<pid>/status (VmRSS), in MB. */
export function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

/** A worker process of the bench's own, and the IPC calls to it. */
export interface WorkerProcess {
  pid: number;
  cacheSlots: number;
  /** The identity the server records on the workflow tasks this worker runs. */
  identity: string;
  status(gc?: boolean): Promise<{ cached: number; heapMb: number; modelMs: Record<string, number> }>;
  stop(): Promise<void>;
}

export async function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const child: ChildProcess = fork(require.resolve('./capacity-worker'), [], {
    env,
    execArgv: [...process.execArgv.filter((arg) => !arg.startsWith('--test')), '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T extends FromCapacityWorker['type']>(type: T, timeoutMs: number) =>
    new Promise<Extract<FromCapacityWorker, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`the bench's worker process sent no "${type}" within ${timeoutMs / 1000} s`)), timeoutMs);
      const onMessage = (message: FromCapacityWorker) => {
        if (message.type === type) done(undefined, message as Extract<FromCapacityWorker, { type: T }>);
        if (message.type === 'failed') done(new Error(`the bench's worker process failed: ${message.error}`));
      };
      const onExit = (code: number | null) => done(new Error(`the bench's worker process exited (code ${code}) before "${type}"`));
      const done = (error?: Error, message?: Extract<FromCapacityWorker, { type: T }>) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve(message!);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ask = (message: ToCapacityWorker) => child.send(message);
  try {
    const ready = await next('ready', 120_000);
    return {
      pid: child.pid!,
      cacheSlots: ready.cacheSlots,
      identity: ready.identity,
      async status(gc = false) {
        const answer = next('status', 30_000);
        ask({ type: 'status', gc });
        return answer;
      },
      stop: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          ask({ type: 'stop' });
        }),
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
