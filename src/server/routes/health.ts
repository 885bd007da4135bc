import type { RouteContext } from '../context';
import { TemporalDown } from '../context';
import type { Answer } from '../http';

/** GET /healthz: 200 when Temporal answers, else 503 (no credentials needed). */
export async function health(ctx: RouteContext): Promise<Answer> {
  if (ctx.deps.isShuttingDown?.()) return { status: 503, body: { error: 'shutting down', retryable: true } };
  try {
    await ctx.temporal('health check', () => ctx.deps.client.workflowService.getSystemInfo({}), Math.min(ctx.temporalTimeoutMs, 3_000));
    return { status: 200, body: { status: 'ok', temporal: 'ok', auth: ctx.auth.mode } };
  } catch (error) {
    const detail = error instanceof TemporalDown ? 'no answer' : `${(error as Error).name}: ${(error as Error).message}`;
    return { status: 503, body: { error: `Temporal at ${ctx.deps.config.TEMPORAL_ADDRESS} is unreachable (${detail})`, retryable: true } };
  }
}
