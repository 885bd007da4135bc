import type { Pool } from 'pg';
import type { RouteContext } from '../context';
import { RETRY_AFTER_SECONDS, TemporalDown } from '../context';
import type { Answer } from '../http';

/** Longest a health check waits for each dependency before calling it down. */
export const HEALTH_DEADLINE_MS = 3_000;

/** `SELECT 1` under a deadline: "ok", or why Postgres did not answer (never its address or credentials). */
async function postgresHealth(pool: Pool, timeoutMs: number): Promise<string> {
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

/** GET /healthz: 200 when Temporal and Postgres both answer, else 503 naming which is down (no credentials needed). */
export async function health(ctx: RouteContext): Promise<Answer> {
  if (ctx.deps.isShuttingDown?.()) return { status: 503, body: { error: 'shutting down', retryable: true }, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } };
  const deadline = Math.min(ctx.temporalTimeoutMs, HEALTH_DEADLINE_MS);
  const [temporal, postgres] = await Promise.all([
    ctx
      .temporal('health check', () => ctx.deps.client.workflowService.getSystemInfo({}), deadline)
      .then(
        () => 'ok',
        (error: Error) => (error instanceof TemporalDown ? 'no answer' : error.name),
      ),
    postgresHealth(ctx.deps.pool, deadline),
  ]);
  if (temporal === 'ok' && postgres === 'ok') return { status: 200, body: { status: 'ok', temporal: 'ok', postgres: 'ok', auth: ctx.auth.mode } };
  const down = [
    ...(temporal === 'ok' ? [] : [`Temporal at ${ctx.deps.config.TEMPORAL_ADDRESS} is unreachable (${temporal})`]),
    ...(postgres === 'ok' ? [] : [`Postgres is unreachable (${postgres})`]),
  ];
  return {
    status: 503,
    body: { error: down.join('; '), temporal: temporal === 'ok' ? 'ok' : 'down', postgres: postgres === 'ok' ? 'ok' : 'down', retryable: true },
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  };
}
