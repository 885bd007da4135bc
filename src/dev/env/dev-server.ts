import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../schemas/search-attributes';
import { findTemporalCli } from './temporal-cli';

/** A Temporal dev server this process started, or one that was already listening. */
export interface DevServer {
  address: string;
  uiUrl: string;
  startedHere: boolean;
  stop(): Promise<void>;
}

/** True when something accepts TCP connections at host:port within `timeoutMs`. */
export function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Dynamic config every dev server casework starts gets (the demo, `casework dev`, the benches,
 * the test suite): eager activity dispatch, so an activity a workflow task schedules on the
 * worker's own task queue comes back in the task's completion instead of through a poll (the
 * SDK asks for it by default, ActivityOptions.allowEagerDispatch; the server grants it only
 * with this flag). docker-compose's cluster sets the same in deploy/temporal/dynamicconfig.yaml.
 */
export const CASEWORK_DYNAMIC_CONFIG: Readonly<Record<string, string | number | boolean>> = { 'system.enableActivityEagerExecution': true };

/** Dev servers this process started and has not seen exit: stopped when the process ends, however it ends. */
const running = new Set<ChildProcess>();
let hooksInstalled = false;

/**
 * Makes sure `child` does not outlive this process: on exit (normal, process.exit, an error that
 * ends it) it is sent SIGTERM, and so on SIGINT, SIGTERM or SIGHUP. A dev server left behind
 * would hold its ports (7233, 8233) and make the next run reuse a stranger's server.
 */
function stopWithThisProcess(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (hooksInstalled) return;
  hooksInstalled = true;
  const stopAll = () => {
    for (const server of running) server.kill('SIGTERM');
  };
  process.on('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      stopAll();
      // A listener keeps the process alive through the signal: alone, this one restores the default (end the process) and raises it again.
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

async function waitForHealth(cli: string, address: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const { spawnSync } = await import('node:child_process');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal server start-dev exited with code ${child.exitCode}`);
    const health = spawnSync(cli, ['operator', 'cluster', 'health', '--address', address], { encoding: 'utf8', timeout: 5_000 });
    if (health.status === 0 && health.stdout.includes('SERVING')) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Temporal dev server at ${address} did not become healthy within ${timeoutMs} ms`);
}

/**
 * Starts `temporal server start-dev` (gRPC on `port`, web UI on `uiPort`, casework's search
 * attributes registered), or reuses a server already listening there. `dbFile` keeps history
 * across restarts; without it the server is in memory.
 */
export interface DevServerOptions {
  port?: number;
  uiPort?: number;
  dbFile?: string;
  headless?: boolean;
  /** Dynamic config values beside CASEWORK_DYNAMIC_CONFIG, e.g. { 'limit.historyCount.suggestContinueAsNew': 1000 }. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const port = options.port ?? 7233;
  const uiPort = options.uiPort ?? 8233;
  const address = `127.0.0.1:${port}`;
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  if (await isListening('127.0.0.1', port)) {
    return { address, uiUrl, startedHere: false, stop: async () => undefined };
  }
  const cli = findTemporalCli();
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  for (const flag of SEARCH_ATTRIBUTE_FLAGS) args.push('--search-attribute', flag);
  for (const [key, value] of Object.entries({ ...CASEWORK_DYNAMIC_CONFIG, ...options.dynamicConfig })) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: false });
  stopWithThisProcess(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  try {
    await waitForHealth(cli, address, child, 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}${stderr ? `\n${stderr}` : ''}`, { cause: error });
  }
  return {
    address,
    uiUrl,
    startedHere: true,
    stop: () =>
      new Promise<void>((resolvePromise) => {
        if (child.exitCode !== null) return resolvePromise();
        child.once('exit', () => resolvePromise());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}
