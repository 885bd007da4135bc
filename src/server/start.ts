import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { connectionOptions } from '../temporal/connection';
import { dataConverterFor } from '../temporal/data-converter';
import { createApp, type App, type AppDeps, type RequestLog } from './app';
import { drainingClose } from './http';
import { traceRequest } from '../observability/http-tracing';
import { currentTracing, startTracing } from '../observability/tracing';
import { tracingClientInterceptors } from '../observability/worker-tracing';

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
  // Tracing is decided once, at start: off, requests go straight to the app.
  const server: Server = createServer(currentTracing() ? (req, res) => void traceRequest(req, res, () => app.handle(req, res)) : (req, res) => void app.handle(req, res));
  // CONNECT asks for a tunnel, not a resource; Node hands it to this event, and with no listener
  // drops the connection unanswered. It gets one answer like every other request.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const text = JSON.stringify({ error: 'CONNECT is not allowed: casework is not a proxy' });
    socket.on('error', () => undefined);
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
        `allow: GET, POST, PATCH, DELETE\r\nconnection: close\r\n\r\n${text}`,
    );
    deps.log({ ts: new Date().toISOString(), level: 'info', msg: 'http request', method: 'CONNECT', path: (req.url ?? '').slice(0, 200), status: 405, ms: 0 });
  });
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
  const closeGracefully = drainingClose(server, () => {
    draining = true;
  });
  return {
    port: bound,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    app,
    close(graceMs = SHUTDOWN_GRACE_MS) {
      return closeGracefully(graceMs);
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

/**
 * A Temporal client that connects on first use, so the endpoint starts (and answers 503) while
 * Temporal is down; with casework's data converter, payloads stored in `pool` when given.
 */
export function lazyClient(config: Config, options: { pool?: Pool } = {}): { client: Client; close(): Promise<void> } {
  const dataConverter = dataConverterFor(config, options.pool);
  const connection = Connection.lazy({ ...connectionOptions(config), connectTimeout: '5 seconds' });
  // The endpoint's traces start here when OTEL_EXPORTER_OTLP_ENDPOINT is set: signal-with-start carries their context.
  const interceptors = tracingClientInterceptors(startTracing(config, { serviceName: 'casework-api' }));
  return { client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter, interceptors }), close: () => connection.close() };
}
