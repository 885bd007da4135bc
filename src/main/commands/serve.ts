import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { UsageError } from '../usage';
import type { Config } from '../../config';
import { migrate } from '../../db/migrate';
import { openDatabase } from '../../db/pool';
import { connectionOptions } from '../../temporal/connection';
import { createApp, type App, type AppDeps, type RequestLog } from '../../server/app';
import { ApiKeyConfigError, createAuthenticator } from '../../server/auth';

type Out = (line: string) => void;

/** A listening endpoint. */
export interface RunningServer {
  port: number;
  url: string;
  app: App;
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/** How long a shutdown waits for requests in flight before cutting connections. */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Serves the app on `port` (0 picks a free one) at `host`. Timeouts keep a slow or silent
 * client from holding a connection open forever.
 */
export async function startServer(deps: Omit<AppDeps, 'isShuttingDown'>, port: number, host = '127.0.0.1'): Promise<RunningServer> {
  let draining = false;
  const app = createApp({ ...deps, isShuttingDown: () => draining });
  const server: Server = createServer((req, res) => void app.handle(req, res));
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port: bound,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    app,
    close(graceMs = SHUTDOWN_GRACE_MS) {
      closing ??= new Promise<void>((resolve) => {
        draining = true;
        const cut = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

const LEVELS = { debug: 0, info: 1, warn: 2, error: 3 } as const;

/** A log function writing one JSON line per entry at or above the configured level. */
export function jsonLog(config: Config, out: Out): (entry: RequestLog | (Record<string, unknown> & { level: RequestLog['level'] })) => void {
  const floor = LEVELS[config.CASEWORK_LOG_LEVEL];
  return (entry) => {
    if (LEVELS[entry.level] >= floor) out(JSON.stringify('ts' in entry ? entry : { ts: new Date().toISOString(), ...entry }));
  };
}

/** A Temporal client that connects on first use, so the endpoint starts (and answers 503) while Temporal is down. */
export function lazyClient(config: Config): { client: Client; close(): Promise<void> } {
  const connection = Connection.lazy({ ...connectionOptions(config), connectTimeout: '5 seconds' });
  return { client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), close: () => connection.close() };
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * `casework serve [--port N] [--host H] [--open]`: the ticket-event endpoint. Refuses to start
 * without CASEWORK_API_KEYS unless open local mode is asked for (then 127.0.0.1 only). Runs
 * until SIGINT or SIGTERM, then drains requests in flight and closes Postgres and Temporal.
 */
export async function serveCommand(args: string[], config: Config, out: Out): Promise<number> {
  const { values } = parseArgs({ args, options: { port: { type: 'string' }, host: { type: 'string' }, open: { type: 'boolean' } } });
  let port = config.CASEWORK_HTTP_PORT;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65_535) throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`);
    port = Number(values.port);
  }
  const open = values.open === true || config.CASEWORK_HTTP_OPEN === 'true';
  const log = jsonLog(config, out);
  let auth;
  try {
    auth = createAuthenticator({ apiKeys: config.CASEWORK_API_KEYS, open });
  } catch (error) {
    if (error instanceof ApiKeyConfigError) {
      out(`error: casework serve will not start: ${error.message}`);
      return 2;
    }
    throw error;
  }
  let host = values.host ?? config.CASEWORK_HTTP_HOST;
  if (auth.mode === 'open') {
    host = '127.0.0.1';
    log({ level: 'warn', msg: 'OPEN LOCAL MODE: no API keys, every caller is trusted (any customer, any approver); listening on 127.0.0.1 only. Never run this way in production; set CASEWORK_API_KEYS.' });
  }

  const db = await openDatabase(config);
  const temporal = lazyClient(config);
  try {
    await migrate(db.admin);
    if (db.embedded) {
      log({ level: 'warn', msg: 'embedded Postgres: the memory routes see this process\'s own database; set DATABASE_URL to share the workers\' one' });
    }
    const server = await startServer({ client: temporal.client, pool: db.app, config, log, auth }, port, host);
    log({
      level: 'info',
      msg: 'casework serve listening',
      url: server.url,
      auth: auth.mode === 'open' ? 'open local mode' : `${auth.keyCount} API key(s)`,
      temporal: config.TEMPORAL_ADDRESS,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
    });
    // Tell the operator now, not on the first event, when Temporal is not there; the endpoint still answers (503).
    void temporal.client
      .withDeadline(Date.now() + 5_000, () => temporal.client.workflowService.getSystemInfo({}))
      .catch((error: Error) => log({ level: 'warn', msg: `Temporal at ${config.TEMPORAL_ADDRESS} is not answering yet (${error.message}); events get 503 until it does` }));
    const signal = await waitForSignal();
    log({ level: 'info', msg: `${signal}: draining requests in flight (up to ${SHUTDOWN_GRACE_MS / 1000} s)` });
    await server.close();
    log({ level: 'info', msg: 'casework serve stopped' });
    return 0;
  } finally {
    await temporal.close().catch(() => undefined);
    await db.close();
  }
}
