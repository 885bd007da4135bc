import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { approvalAgesFrom } from './approval-ages';
import { postgresProbe, temporalProbe } from './dependency-probes';
import { processMetrics, type CaseworkMetrics } from './metrics';
import { visibilityCounts } from './visibility';

// The worker's operator endpoint on CASEWORK_METRICS_PORT:
//   GET /metrics   casework's metrics, Node's default metrics and the Temporal runtime's own
//                  (fetched from its loopback exporter and appended), in one scrape
//   GET /healthz   liveness: 200 while the worker is alive (starting, polling or draining)
//   GET /readyz    readiness: 200 when it can take work now (polling, its dependencies answer),
//                  503 naming what is missing (the container health check)

/** What /healthz reports: ok, and details a person can read. */
export type HealthCheck = () => { ok: boolean } & Record<string, unknown>;

/** Options of the operator endpoint. */
export interface MetricsEndpointOptions {
  config: Pick<Config, 'CASEWORK_METRICS_PORT' | 'CASEWORK_METRICS_HOST' | 'CASEWORK_METRICS_VISIBILITY_SECONDS' | 'TEMPORAL_TASK_QUEUE'>;
  metrics?: CaseworkMetrics;
  /** Where the Temporal runtime exports its own metrics (installTelemetry's answer); unset, they are left out. */
  temporalMetricsPort?: number;
  /** A client for the visibility counts behind casework_approvals_waiting; unset, those gauges stay empty. */
  client?: Client;
  health?: HealthCheck;
  /** What /readyz reports; unset, /readyz answers as /healthz does. */
  ready?: () => Promise<{ ok: boolean } & Record<string, unknown>>;
  /** A pool of the role that migrates (it may read the refund trail across customers) and the reminder delay, for the approval-age gauges and the Postgres probe; unset, those stay empty. */
  admin?: { pool: Pool; approvalReminderSeconds: number };
}

/** A running operator endpoint. */
export interface MetricsEndpoint {
  port: number;
  url: string;
  close(): Promise<void>;
}

async function temporalRuntimeMetrics(port: number): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) });
    if (!response.ok) return `# Temporal runtime metrics unavailable: HTTP ${response.status}\n`;
    const text = await response.text();
    return text.endsWith('\n') ? text : `${text}\n`;
  } catch (error) {
    return `# Temporal runtime metrics unavailable: ${(error as Error).message}\n`;
  }
}

/** Starts the operator endpoint on CASEWORK_METRICS_PORT (0 picks a free port, for tests). */
export async function startMetricsEndpoint(options: MetricsEndpointOptions): Promise<MetricsEndpoint> {
  const metrics = options.metrics ?? processMetrics();
  if (options.client) {
    metrics.setOpenInvestigationSource(
      visibilityCounts(options.client, {
        taskQueue: options.config.TEMPORAL_TASK_QUEUE,
        refreshMs: options.config.CASEWORK_METRICS_VISIBILITY_SECONDS * 1000,
      }),
    );
    metrics.setDependencyProbe('temporal', temporalProbe(options.client));
  }
  if (options.admin) {
    metrics.setApprovalAgeSource(
      approvalAgesFrom(options.admin.pool, {
        reminderSeconds: options.admin.approvalReminderSeconds,
        refreshMs: options.config.CASEWORK_METRICS_VISIBILITY_SECONDS * 1000,
      }),
    );
    metrics.setDependencyProbe('postgres', postgresProbe(options.admin.pool));
  }
  if (options.health) {
    const health = options.health;
    metrics.setPollingCheck(() => health().ok);
  }
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'GET only\n');
    if (path === '/metrics') {
      const own = await metrics.registry.metrics();
      const temporal = options.temporalMetricsPort ? await temporalRuntimeMetrics(options.temporalMetricsPort) : '';
      return send(res, 200, metrics.registry.contentType, `${own.endsWith('\n') ? own : `${own}\n`}${temporal}`);
    }
    if (path === '/healthz' || path === '/readyz') {
      const health = (path === '/readyz' ? await options.ready?.() : undefined) ?? options.health?.() ?? { ok: true };
      return send(res, health.ok ? 200 : 503, 'application/json', `${JSON.stringify(health)}\n`);
    }
    return send(res, 404, 'text/plain', 'not found: GET /metrics, /healthz or /readyz\n');
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => send(res, 500, 'text/plain', `metrics failed: ${error.message}\n`));
  });
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot serve metrics on ${options.config.CASEWORK_METRICS_HOST}:${options.config.CASEWORK_METRICS_PORT}: ${error.code ?? error.message}`)),
    );
    server.listen(options.config.CASEWORK_METRICS_PORT, options.config.CASEWORK_METRICS_HOST, () => resolvePromise());
  });
  // Scrapers keep connections open; they must not hold the process up at shutdown.
  server.unref();
  const port = (server.address() as AddressInfo).port;
  const host = options.config.CASEWORK_METRICS_HOST === '0.0.0.0' ? '127.0.0.1' : options.config.CASEWORK_METRICS_HOST;
  return {
    port,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolvePromise) => {
        metrics.setOpenInvestigationSource(undefined);
        metrics.setApprovalAgeSource(undefined);
        metrics.setDependencyProbe('postgres', undefined);
        metrics.setDependencyProbe('temporal', undefined);
        metrics.setPollingCheck(undefined);
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}
