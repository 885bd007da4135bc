import type { ServerResponse } from 'node:http';
import { processMetrics } from '../../observability/metrics';

/**
 * GET /metrics: this process's metrics in the Prometheus text format, among them the desk
 * webhooks received and rejected by reason (the worker's own endpoint has the posts). Answers
 * itself: the body is text, not JSON.
 */
export async function sendMetrics(res: ServerResponse): Promise<void> {
  const { registry } = processMetrics();
  const text = await registry.metrics();
  res.writeHead(200, { 'content-type': registry.contentType, 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store' });
  res.end(text);
}
