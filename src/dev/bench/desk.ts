import { randomBytes, randomInt } from 'node:crypto';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import { createDeskActivities } from '../../activities/desk';
import { migrate } from '../../db/migrate';
import { openDatabase } from '../../db/pool';
import type { DeskClient } from '../../desk/client';
import { deskSettings } from '../../desk/settings';
import type { InboundDeskName } from '../../desk/types';
import { processMetrics } from '../../observability/metrics';
import { lazyClient, startServer } from '../../server/start';
import { startDeskStandin, type DeskStandin } from '../desk-standin';
import { startDevServer } from '../env/dev-server';
import { freshDeliveries, type BenchDelivery, type BenchDeskSecrets } from './desk-deliveries';
import { percentile } from './events';

// `casework bench desk`: the two figures issue 13 asks for, measured in one run on one machine.
//
// (a) Webhook accept latency: signed Zendesk, Intercom and Freshdesk deliveries POSTed over
//     real HTTP to the real casework server, which verifies, maps, passes the ticket gate in
//     Postgres and signal-with-starts on the Temporal dev server (a task queue with no worker, so
//     the figure is the 2xx answer, not the investigation). Each delivery is sent fresh (a new
//     ticket) and then again as the desk's redelivery (the same bytes): a duplicate.
// (b) Replies posted per second to the Zendesk stand-in (a test double of Zendesk, in this
//     process, over loopback): the raw client, the postToDesk activity as the worker wires it
//     (client from configuration, metrics observer), and postToDesk again for replies already
//     posted (a retried activity: the exactly-once check finds each and posts nothing).

type Out = (line: string) => void;

const INBOUND_DESK_NAMES: readonly InboundDeskName[] = ['zendesk', 'intercom', 'freshdesk'];

/** One row of the webhook table. */
export interface WebhookBenchRow {
  desk: InboundDeskName;
  delivery: 'fresh' | 'duplicate';
  concurrency: number;
  sent: number;
  /** Deliveries that got exactly one HTTP answer (each is sent once; 0 answers is a transport error). */
  answered: number;
  /** Answers by HTTP status ("0": no answer). */
  statuses: Record<string, number>;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** One row of the replies table. */
export interface RepliesBenchRow {
  path: 'client' | 'postToDesk' | 'postToDesk, already posted';
  concurrency: number;
  replies: number;
  seconds: number;
  repliesPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  /** Public comments on the stand-in's tickets beyond one per reply (must be 0). */
  duplicates: number;
  /** What postToDesk answered, by outcome ("posted", "already_posted"); empty for the raw client. */
  outcomes: Record<string, number>;
}

/** What `casework bench desk` measured; --json prints it. */
export interface DeskBenchResult {
  webhooks: WebhookBenchRow[];
  replies: RepliesBenchRow[];
  /** Workflows the fresh deliveries started, as Temporal's visibility counts them (one per fresh delivery). */
  workflowsStarted: number;
  freshDeliveries: number;
}

/** Options of `runDeskBench`. */
export interface DeskBenchOptions {
  out: Out;
  /** Fresh deliveries per desk and concurrency (each also redelivered once). */
  deliveries?: number;
  /** Replies per path and concurrency. */
  replies?: number;
  concurrency?: number[];
  json?: boolean;
  /** A migrated database to use (tests); otherwise the configured one, migrated first. */
  pool?: Pool;
}

const round = (v: number) => Math.round(v * 100) / 100;

async function sendAll(url: string, deliveries: BenchDelivery[], concurrency: number): Promise<{ latencies: number[]; statuses: number[] }> {
  const latencies: number[] = [];
  const statuses: number[] = new Array<number>(deliveries.length).fill(-1);
  let next = 0;
  const one = async (i: number) => {
    const d = deliveries[i]!;
    const started = performance.now();
    try {
      const res = await fetch(`${url}/webhooks/${d.desk}`, { method: 'POST', headers: d.headers, body: d.body });
      await res.arrayBuffer();
      statuses[i] = res.status;
    } catch {
      statuses[i] = 0;
    }
    latencies.push(performance.now() - started);
  };
  await Promise.all(
    Array.from({ length: Math.min(concurrency, deliveries.length) }, async () => {
      while (next < deliveries.length) await one(next++);
    }),
  );
  return { latencies, statuses };
}

function webhookRow(desk: InboundDeskName, delivery: WebhookBenchRow['delivery'], concurrency: number, sent: { latencies: number[]; statuses: number[] }): WebhookBenchRow {
  const sorted = [...sent.latencies].sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const s of sent.statuses) statuses[String(s)] = (statuses[String(s)] ?? 0) + 1;
  return {
    desk,
    delivery,
    concurrency,
    sent: sent.statuses.length,
    answered: sent.statuses.filter((s) => s > 0).length,
    statuses,
    p50Ms: round(percentile(sorted, 0.5)),
    p95Ms: round(percentile(sorted, 0.95)),
    p99Ms: round(percentile(sorted, 0.99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
  };
}

type PostOne = (ticketId: number, sequence: number) => Promise<string | undefined>;

/** Posts `replies` replies, `tickets.length` at a time; reply n goes to the same ticket with the same number on every pass. */
async function postAll(tickets: number[], replies: number, post: PostOne): Promise<{ seconds: number; latencies: number[]; outcomes: Record<string, number> }> {
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    tickets.map(async () => {
      for (let n = next++; n < replies; n = next++) {
        const t0 = performance.now();
        const outcome = await post(tickets[n % tickets.length]!, n + 1);
        latencies.push(performance.now() - t0);
        if (outcome) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies, outcomes };
}

/** Formats the webhook rows as an aligned table. */
export function webhookBenchTable(rows: readonly WebhookBenchRow[]): string[] {
  return alignedTable(
    ['desk', 'delivery', 'concurrency', 'sent', 'answered', 'answers', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
    rows.map((r) => [
      r.desk,
      r.delivery,
      String(r.concurrency),
      String(r.sent),
      String(r.answered),
      Object.entries(r.statuses)
        .map(([s, n]) => `${s}x${n}`)
        .join(' '),
      r.p50Ms.toFixed(2),
      r.p95Ms.toFixed(2),
      r.p99Ms.toFixed(2),
      r.maxMs.toFixed(2),
    ]),
  );
}

/** Formats the replies rows as an aligned table. */
export function repliesBenchTable(rows: readonly RepliesBenchRow[]): string[] {
  return alignedTable(
    ['path', 'concurrency', 'replies', 'seconds', 'replies/s', 'p50 ms', 'p95 ms', 'duplicates', 'outcomes'],
    rows.map((r) => [
      r.path,
      String(r.concurrency),
      String(r.replies),
      r.seconds.toFixed(2),
      r.repliesPerSecond.toFixed(0),
      r.p50Ms.toFixed(2),
      r.p95Ms.toFixed(2),
      String(r.duplicates),
      Object.entries(r.outcomes)
        .map(([o, n]) => `${o}x${n}`)
        .join(' ') || '-',
    ]),
  );
}

/** Rows as an aligned table: the first column left-aligned, the rest right-aligned. */
export function alignedTable(header: string[], cells: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
}

/** Counts the workflows on `taskQueue` once visibility has caught up with `expected` (or after ~15 s). */
async function countWorkflows(client: ReturnType<typeof lazyClient>['client'], taskQueue: string, expected: number): Promise<number> {
  let seen = 0;
  for (let attempt = 0; attempt < 60; attempt++) {
    seen = (await client.workflow.count(`TaskQueue = "${taskQueue}"`)).count;
    if (seen >= expected) return seen;
    await new Promise((r) => setTimeout(r, 250));
  }
  return seen;
}

/** Terminates the bench's running workflows. */
export async function terminateAll(client: ReturnType<typeof lazyClient>['client'], taskQueue: string): Promise<void> {
  const ids: string[] = [];
  for await (const w of client.workflow.list({ query: `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"` })) ids.push(w.workflowId);
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.allSettled(ids.slice(i, i + 50).map((id) => client.workflow.getHandle(id).terminate('casework bench desk: cleanup')));
  }
}

/** Fresh secrets for one bench run, and the desk users it maps to one customer. */
export function benchSecrets(): BenchDeskSecrets {
  return {
    intercomClientSecret: randomBytes(16).toString('hex'),
    freshdeskToken: randomBytes(16).toString('hex'),
    zendeskRequester: 8447388090494,
    intercomContact: '5d6a4c8e0e8a2b1c3d4e5f60',
    freshdeskEmail: 'priya@example.com',
  };
}

/** The configuration of a bench server taking all three desks' webhooks onto `taskQueue` (no worker polls it). */
export function benchDeskConfig(config: Config, bench: { standin: DeskStandin; secrets: BenchDeskSecrets; taskQueue: string }): Config {
  const { standin, secrets, taskQueue } = bench;
  return {
    ...config,
    TEMPORAL_TASK_QUEUE: taskQueue,
    CASEWORK_HTTP_OPEN: 'true',
    CASEWORK_LOG_LEVEL: 'warn',
    CASEWORK_DESKS: 'zendesk,intercom,freshdesk',
    CASEWORK_DESK_CUSTOMERS: `zendesk:${secrets.zendeskRequester}=cust_bench,intercom:${secrets.intercomContact}=cust_bench,freshdesk:${secrets.freshdeskEmail}=cust_bench`,
    CASEWORK_ZENDESK_BASE_URL: standin.url,
    CASEWORK_ZENDESK_EMAIL: standin.agent.email,
    CASEWORK_ZENDESK_API_TOKEN: standin.agent.apiToken,
    CASEWORK_ZENDESK_WEBHOOK_SECRET: standin.webhookSecret,
    CASEWORK_INTERCOM_CLIENT_SECRET: secrets.intercomClientSecret,
    CASEWORK_INTERCOM_BASE_URL: 'http://127.0.0.1:9',
    CASEWORK_INTERCOM_ACCESS_TOKEN: 'unused-by-the-bench',
    CASEWORK_INTERCOM_ADMIN_ID: '1',
    CASEWORK_FRESHDESK_WEBHOOK_TOKEN: secrets.freshdeskToken,
    CASEWORK_FRESHDESK_BASE_URL: 'http://127.0.0.1:9',
    CASEWORK_FRESHDESK_API_KEY: 'unused-by-the-bench',
  };
}

/** What a desk bench run starts with; `stops` closes what it opened, last first. */
export interface DeskBenchSetup {
  /** The local dev server's gRPC port, from TEMPORAL_ADDRESS. */
  port: string | undefined;
  /** Where this run's ids start: apart from earlier runs, since the ticket gate admits an event id once, for good. */
  base: number;
  standin: DeskStandin;
  secrets: BenchDeskSecrets;
  taskQueue: string;
  benchConfig: Config;
  stops: (() => Promise<unknown>)[];
}

/** Checks TEMPORAL_ADDRESS is local and starts the Zendesk stand-in, with fresh secrets and a task queue of the run's own. */
export async function startDeskBench(config: Config, name: 'desk' | 'storm'): Promise<DeskBenchSetup> {
  const [host, port] = config.TEMPORAL_ADDRESS.split(':');
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`casework bench desk uses a local dev server; TEMPORAL_ADDRESS is ${config.TEMPORAL_ADDRESS}`);
  const base = randomInt(1, 2 ** 40) * 1000;
  const standin = await startDeskStandin({ firstTicketId: randomInt(100_000, 900_000_000), firstCommentId: base });
  const secrets = benchSecrets();
  const taskQueue = `casework-bench-${name}-${base.toString(36)}`;
  return { port, base, standin, secrets, taskQueue, benchConfig: benchDeskConfig(config, { standin, secrets, taskQueue }), stops: [() => standin.close()] };
}

/** The configured database, migrated, as the application pool; its close joins `stops`. */
export async function openBenchPool(config: Config, stops: (() => Promise<unknown>)[]): Promise<Pool> {
  const db = await openDatabase(config);
  stops.push(() => db.close());
  await migrate(db.admin);
  return db.app;
}

/**
 * `casework bench desk`: webhook accept latency over HTTP with Temporal behind the server, and
 * replies per second to the Zendesk stand-in, per concurrency level. Starts (or reuses) the
 * Temporal dev server at TEMPORAL_ADDRESS; the workflows it starts are terminated afterwards.
 */
export async function runDeskBench(config: Config, options: DeskBenchOptions): Promise<DeskBenchResult> {
  const deliveries = options.deliveries ?? 300;
  const replies = options.replies ?? 400;
  const levels = options.concurrency ?? [1, 8];
  const { port, base, standin, secrets, taskQueue, benchConfig, stops } = await startDeskBench(config, 'desk');
  const result: DeskBenchResult = { webhooks: [], replies: [], workflowsStarted: 0, freshDeliveries: 0 };
  try {
    const dev = await startDevServer({ port: Number(port || 7233), uiPort: Number(new URL(config.TEMPORAL_UI_URL).port || 8233) });
    stops.push(() => dev.stop());
    const pool = options.pool ?? (await openBenchPool(config, stops));
    const temporal = lazyClient(benchConfig, { pool });
    stops.push(() => temporal.close());
    stops.push(() => terminateAll(temporal.client, taskQueue));
    const server = await startServer({ client: temporal.client, pool, config: benchConfig, log: () => undefined }, 0);
    stops.push(() => server.close(0));

    let n = base;
    const take = (desk: InboundDeskName, count: number) => {
      const batch = freshDeliveries(desk, count, n, secrets, standin);
      n += count;
      return batch;
    };
    // Warm-up (connections, JIT, the first workflow starts): not in the figures, but counted as started.
    for (const desk of INBOUND_DESK_NAMES) await sendAll(server.url, take(desk, 5), 1);
    result.freshDeliveries += INBOUND_DESK_NAMES.length * 5;
    for (const concurrency of levels) {
      for (const desk of INBOUND_DESK_NAMES) {
        const batch = take(desk, deliveries);
        result.webhooks.push(webhookRow(desk, 'fresh', concurrency, await sendAll(server.url, batch, concurrency)));
        result.webhooks.push(webhookRow(desk, 'duplicate', concurrency, await sendAll(server.url, batch, concurrency)));
        result.freshDeliveries += deliveries;
      }
    }
    result.workflowsStarted = await countWorkflows(temporal.client, taskQueue, result.freshDeliveries);

    const zendesk = deskSettings(benchConfig).clients.get('zendesk') as DeskClient;
    const { postToDesk } = createDeskActivities({ clients: new Map([['zendesk', zendesk]]), observer: processMetrics().desk.observer });
    for (const concurrency of levels) {
      const tickets = Array.from({ length: concurrency }, () => standin.createTicket({ requesterId: secrets.zendeskRequester, subject: 'bench', body: 'bench' }).ticketId);
      const workflowId = `bench-desk-${base}-c${concurrency}`;
      const passes: [RepliesBenchRow['path'], PostOne][] = [
        [
          'client',
          async (ticketId, sequence) => {
            await zendesk.post({ workflowId: `${workflowId}-client`, externalTicketId: String(ticketId), kind: 'reply', sequence, body: `Reply ${sequence}` });
            return undefined;
          },
        ],
        [
          'postToDesk',
          async (ticketId, sequence) => (await postToDesk({ workflowId, ticketId: `zendesk-${ticketId}`, kind: 'reply', sequence, body: `Reply ${sequence}` })).outcome,
        ],
        [
          'postToDesk, already posted',
          async (ticketId, sequence) => (await postToDesk({ workflowId, ticketId: `zendesk-${ticketId}`, kind: 'reply', sequence, body: `Reply ${sequence}` })).outcome,
        ],
      ];
      let expected = 0;
      for (const [path, post] of passes) {
        const measured = await postAll(tickets, replies, post);
        if (path !== 'postToDesk, already posted') expected += replies;
        const comments = tickets.reduce((sum, id) => sum + (standin.ticket(id)?.comments.filter((c) => c.public && c.author_id === standin.agent.id).length ?? 0), 0);
        const sorted = [...measured.latencies].sort((a, b) => a - b);
        result.replies.push({
          path,
          concurrency,
          replies,
          seconds: round(measured.seconds),
          repliesPerSecond: round(replies / measured.seconds),
          p50Ms: round(percentile(sorted, 0.5)),
          p95Ms: round(percentile(sorted, 0.95)),
          duplicates: comments - expected,
          outcomes: measured.outcomes,
        });
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }

  if (options.json) options.out(JSON.stringify(result, null, 2));
  else {
    options.out(`webhook accept over HTTP (verify, map, ticket gate, signal-with-start on Temporal; no worker), ${deliveries} fresh deliveries per row, each then redelivered:`);
    webhookBenchTable(result.webhooks).forEach((l) => options.out(l));
    options.out(`workflows started: ${result.workflowsStarted} for ${result.freshDeliveries} fresh deliveries (warm-up included)`);
    options.out('');
    options.out(`replies posted to the Zendesk stand-in (in this process, loopback), ${replies} per row; each post is the exactly-once check (GET) then the PUT:`);
    repliesBenchTable(result.replies).forEach((l) => options.out(l));
  }
  return result;
}
