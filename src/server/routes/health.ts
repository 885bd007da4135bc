import type { Pool } from 'pg';
import { loadKeyring } from '../../temporal/codec/keys';
import type { RouteContext } from '../context';
import { RETRY_AFTER_SECONDS, TemporalDown } from '../context';
import type { Answer } from '../http';

// Liveness and readiness, apart. /healthz says the process is alive (it answers), so an
// orchestrator restarts only a process that no longer answers: restarting one because Temporal
// or Postgres is down would fix nothing and drop the requests in flight. /readyz says the
// process can do its work now (Temporal and Postgres answer, the payload keys load, it is not
// draining), so a balancer or a health check sends traffic only to replicas that can serve it.
// Neither needs credentials; neither names an address with credentials or a key.

/** Longest a readiness check waits for each dependency before calling it down. */
export const HEALTH_DEADLINE_MS = 3_000;

/** `SELECT 1` under a deadline: "ok", or why Postgres did not answer (never its address or credentials). */
export async function postgresHealth(pool: Pool, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
  });
  try {
    return await Promise.race([
      pool.query('SELECT 1').then(
        () => 'ok',
        (error: Error) => (error as { code?: string }).code ?? error.name,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** "ok" when the payload keys load as configured, else what is wrong with them (the message names the variable, never a key). */
export function keysHealth(config: Parameters<typeof loadKeyring>[0]): string {
  try {
    loadKeyring(config);
    return 'ok';
  } catch (error) {
    return (error as Error).message;
  }
}

/** GET /healthz: liveness. 200 while the process answers, draining or not, whatever its dependencies say. */
export function liveness(ctx: RouteContext): Answer {
  return { status: 200, body: { status: 'alive', draining: ctx.deps.isShuttingDown?.() ?? false } };
}

/** GET /readyz: 200 when Temporal, Postgres and the payload keys are all there and the process is not draining, else 503 naming what is missing. */
export async function readiness(ctx: RouteContext): Promise<Answer> {
  const retry = { 'retry-after': String(RETRY_AFTER_SECONDS) };
  if (ctx.deps.isShuttingDown?.()) return { status: 503, body: { error: 'shutting down: draining requests in flight', draining: true, retryable: true }, headers: retry };
  const deadline = Math.min(ctx.temporalTimeoutMs, HEALTH_DEADLINE_MS);
  const [temporal, postgres] = await Promise.all([
    ctx
      .temporal('readiness check', () => ctx.deps.client.workflowService.getSystemInfo({}), deadline)
      .then(
        () => 'ok',
        (error: Error) => (error instanceof TemporalDown ? 'no answer' : error.name),
      ),
    postgresHealth(ctx.deps.pool, deadline),
  ]);
  const keys = keysHealth(ctx.deps.config);
  const checks = { temporal: temporal === 'ok' ? 'ok' : 'down', postgres: postgres === 'ok' ? 'ok' : 'down', keys: keys === 'ok' ? 'ok' : 'missing' };
  if (temporal === 'ok' && postgres === 'ok' && keys === 'ok') return { status: 200, body: { status: 'ready', ...checks, auth: ctx.auth.mode } };
  const missing = [
    ...(temporal === 'ok' ? [] : [`Temporal at ${ctx.deps.config.TEMPORAL_ADDRESS} is unreachable (${temporal})`]),
    ...(postgres === 'ok' ? [] : [`Postgres is unreachable (${postgres})`]),
    ...(keys === 'ok' ? [] : [`the payload keys do not load: ${keys}`]),
  ];
  return { status: 503, body: { error: `not ready: ${missing.join('; ')}`, ...checks, retryable: true }, headers: retry };
}
