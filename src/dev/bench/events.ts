import { randomUUID } from 'node:crypto';
import { percentile } from './stats';

type Out = (line: string) => void;

/** What one bench pass measured. */
export interface EventsBenchRow {
  concurrency: number;
  sent: number;
  accepted: number;
  failed: number;
  seconds: number;
  eventsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Non-202 answers by status (0 = no answer), when there were any. */
  failures: Record<string, number>;
}

/** Options of `runEventsBench`. */
export interface EventsBenchOptions {
  /** Base URL of a running endpoint, e.g. http://127.0.0.1:8080. */
  url: string;
  /** A key that may speak for `customerId` (the ticketing system's `*` key, typically). */
  apiKey?: string;
  /** Events per pass. */
  count: number;
  /** One pass per concurrency level. */
  concurrency: number[];
  customerId?: string;
  /** Marks ticket ids so a run's workflows can be found (and cleaned up) afterwards. */
  tag?: string;
  out: Out;
  json?: boolean;
}

export { percentile } from './stats';

async function pass(options: EventsBenchOptions, concurrency: number, passTag: string): Promise<EventsBenchRow> {
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  let next = 0;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const one = async (i: number) => {
    const body = JSON.stringify({
      eventId: `bench-${passTag}-${i}`,
      type: 'ticket.created',
      ticketId: `bench-${passTag}-${i}`,
      customerId: options.customerId ?? 'cust_bench',
      message: `Bench ticket ${i}: where is my order?`,
      receivedAt: new Date().toISOString(),
    });
    const started = performance.now();
    let status: number;
    try {
      const res = await fetch(`${options.url}/events`, { method: 'POST', headers, body });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    const ms = performance.now() - started;
    if (status === 202) latencies.push(ms);
    else failures[String(status)] = (failures[String(status)] ?? 0) + 1;
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, options.count) }, async () => {
      while (next < options.count) await one(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    concurrency,
    sent: options.count,
    accepted: latencies.length,
    failed: options.count - latencies.length,
    seconds: round(seconds),
    eventsPerSecond: round(latencies.length / seconds),
    p50Ms: round(percentile(sorted, 0.5)),
    p95Ms: round(percentile(sorted, 0.95)),
    p99Ms: round(percentile(sorted, 0.99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
    failures,
  };
}

/** Formats bench rows as an aligned table. */
export function eventsBenchTable(rows: readonly EventsBenchRow[]): string[] {
  const header = ['concurrency', 'events', 'accepted (202)', 'failed', 'seconds', 'events/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'];
  const cells = rows.map((r) =>
    [
      r.concurrency,
      r.sent,
      r.accepted,
      r.failed,
      r.seconds.toFixed(2),
      r.eventsPerSecond.toFixed(1),
      r.p50Ms.toFixed(1),
      r.p95Ms.toFixed(1),
      r.p99Ms.toFixed(1),
      r.maxMs.toFixed(1),
    ].map(String),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (c: string[]) => c.map((v, i) => v.padStart(widths[i] ?? 0)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
}

/**
 * `casework bench events`: POSTs `count` ticket.created events (each a new ticket, so each
 * starts a workflow) at each concurrency level against a running endpoint, and reports how
 * many were accepted per second and the 202 latency percentiles.
 */
export async function runEventsBench(options: EventsBenchOptions): Promise<EventsBenchRow[]> {
  const tag = options.tag ?? randomUUID().slice(0, 8);
  const rows: EventsBenchRow[] = [];
  // A short warm-up so connection setup and the first workflow starts are not in the figures.
  await pass({ ...options, count: Math.min(20, options.count) }, 4, `${tag}-warm`);
  for (const concurrency of options.concurrency) rows.push(await pass(options, concurrency, `${tag}-c${concurrency}`));
  if (options.json) options.out(JSON.stringify(rows, null, 2));
  else {
    options.out(`POST /events at ${options.url}: ${options.count} ticket.created events per row, each starting a new investigation`);
    eventsBenchTable(rows).forEach((l) => options.out(l));
    for (const r of rows.filter((r) => r.failed)) options.out(`  concurrency ${r.concurrency}: non-202 answers ${JSON.stringify(r.failures)}`);
  }
  return rows;
}
