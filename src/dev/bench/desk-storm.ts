import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import type { InboundDeskName } from '../../desk/types';
import { lazyClient, startServer, type RunningServer } from '../../server/start';
import { decodeHistoryPayloads } from '../../temporal/history-payloads';
import { startDevServer, type DevServer } from '../env/dev-server';
import { alignedTable, openBenchPool, startDeskBench, terminateAll } from './desk';
import { freshDeliveries, type BenchDelivery } from './desk-deliveries';
import { percentile } from './stats';

// `casework bench desk --storm`: desk deliveries as a busy desk sends them to a fleet, and the
// count that matters: every delivery reaches its investigation exactly once. Two casework
// servers (replicas A and B, one Postgres, one Temporal) take signed Zendesk, Intercom and
// Freshdesk deliveries one at a time. 30 % are sent again to the other replica (the desk's
// redelivery), Temporal is stopped in the middle (what arrives then gets 503 and is retried,
// byte for byte, once it is back: about 10 %), and replica A is restarted near the end. Then
// every delivery's investigation is read from Temporal's history: one customer message each.

type Out = (line: string) => void;

const DESKS: readonly InboundDeskName[] = ['zendesk', 'intercom', 'freshdesk'];

/** One row per desk. */
export interface StormRow {
  desk: InboundDeskName;
  deliveries: number;
  /** HTTP requests sent (fresh, duplicates, retries after a 503). */
  sent: number;
  answers: Record<string, number>;
  /** Deliveries whose investigation received the message exactly once. */
  exactlyOnce: number;
  /** Deliveries whose investigation never received it. */
  lost: number;
  /** Deliveries that reached their investigation as more than one event. */
  duplicated: number;
  /** Signals sent again for an event already signalled (its first answer lost to a timeout): dropped by the workflow, which keeps the ids it has seen. */
  resignalled: number;
  freshP50Ms: number;
  freshP95Ms: number;
  duplicateP50Ms: number;
  duplicateP95Ms: number;
}

/** What the storm measured. */
export interface StormResult {
  rows: StormRow[];
  refusedDuringOutage: number;
  replicaRestarts: number;
  outageSeconds: number;
}

interface Tracked {
  delivery: BenchDelivery;
  workflowId: string;
  statuses: number[];
}

const round = (v: number) => Math.round(v * 100) / 100;

/** The workflow id a bench delivery's ticket maps to. */
function workflowOf(d: BenchDelivery): string {
  const body = JSON.parse(d.body.toString('utf8')) as { detail?: { id: number }; data?: { item: { id: string } }; freshdesk_webhook?: { ticket_id: string } };
  const id = d.desk === 'zendesk' ? body.detail?.id : d.desk === 'intercom' ? body.data?.item.id : body.freshdesk_webhook?.ticket_id;
  return `investigation-${d.desk}-${id}`;
}

async function send(server: RunningServer, d: BenchDelivery): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(`${server.url}/webhooks/${d.desk}`, { method: 'POST', headers: d.headers, body: d.body });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

/**
 * Retries each refused delivery, byte for byte, as a desk does: until it is answered 2xx, a
 * second apart, at most 30 times (Temporal may still be starting when the first retry comes).
 */
async function retryRefused(refused: Tracked[], server: RunningServer): Promise<void> {
  for (const t of refused) {
    for (let attempt = 0; attempt < 30; attempt++) {
      const again = await send(server, t.delivery);
      t.statuses.push(again.status);
      if (again.status >= 200 && again.status < 300) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/** Runs the storm with `deliveries` fresh deliveries per desk (at least 5,000 in all by default). */
export async function runDeskStorm(config: Config, options: { out: Out; deliveries?: number; json?: boolean; pool?: Pool }): Promise<StormResult> {
  const perDesk = options.deliveries ?? 1_700;
  const { port, base, standin, secrets, taskQueue, benchConfig, stops } = await startDeskBench(config, 'storm');
  // Its own dev server with a database file, so the restart in the middle keeps the runs.
  const devOptions = {
    port: Number(port || 7233),
    uiPort: Number(new URL(config.TEMPORAL_UI_URL).port || 8233),
    headless: true,
    dbFile: join(mkdtempSync(join(tmpdir(), 'casework-storm-')), 'temporal.db'),
  };
  let dev: DevServer = await startDevServer(devOptions);
  if (!dev.startedHere) throw new Error(`a Temporal server already listens at ${config.TEMPORAL_ADDRESS}; the storm restarts its own: stop it or point TEMPORAL_ADDRESS elsewhere`);
  stops.push(() => dev.stop());
  const result: StormResult = { rows: [], refusedDuringOutage: 0, replicaRestarts: 0, outageSeconds: 0 };
  try {
    const pool = options.pool ?? (await openBenchPool(config, stops));
    const replica = async (listenPort = 0) => {
      const temporal = lazyClient(benchConfig, { pool });
      const server = await startServer({ client: temporal.client, pool, config: benchConfig, log: () => undefined, temporalTimeoutMs: 1_500 }, listenPort);
      return { server, close: async () => (await server.close(0), await temporal.close()) };
    };
    let a = await replica();
    const b = await replica();
    stops.push(() => b.close());
    stops.push(() => a.close());

    let n = base;
    const byDesk = DESKS.map((desk) => {
      const batch = freshDeliveries(desk, perDesk, n, secrets, standin);
      n += perDesk;
      return batch.map((delivery): Tracked => ({ delivery, workflowId: workflowOf(delivery), statuses: [] }));
    });
    // Interleaved, one desk after another, as deliveries arrive: every desk meets the outage, the
    // restart and the machine's load alike, so the desks' rows compare.
    const tracked: Tracked[] = Array.from({ length: perDesk }, (_, i) => byDesk.map((batch) => batch[i]!)).flat();
    const latencies = new Map<InboundDeskName, { fresh: number[]; duplicate: number[] }>(DESKS.map((d) => [d, { fresh: [], duplicate: [] }]));
    const retryLater: Tracked[] = [];
    const outageFrom = Math.floor(tracked.length * 0.45);
    const outageTo = Math.floor(tracked.length * 0.55);
    const restartAt = Math.floor(tracked.length * 0.8);
    let outageStarted = 0;

    for (let i = 0; i < tracked.length; i++) {
      if (i === outageFrom) {
        await dev.stop();
        outageStarted = performance.now();
      }
      if (i === outageTo) {
        dev = await startDevServer(devOptions);
        result.outageSeconds = round((performance.now() - outageStarted) / 1000);
        await retryRefused(retryLater.splice(0), b.server);
      }
      if (i === restartAt) {
        const port = a.server.port;
        await a.close();
        a = await replica(port);
        result.replicaRestarts++;
      }
      const t = tracked[i]!;
      const [first, second] = i % 2 === 0 ? [a.server, b.server] : [b.server, a.server];
      const fresh = await send(first, t.delivery);
      t.statuses.push(fresh.status);
      if (fresh.status === 503 || fresh.status === 0) {
        if (fresh.status === 503) result.refusedDuringOutage++;
        retryLater.push(t);
        continue;
      }
      latencies.get(t.delivery.desk)!.fresh.push(fresh.ms);
      // 30 %: the desk's redelivery, to the other replica.
      if (i % 10 < 3) {
        const dup = await send(second, t.delivery);
        t.statuses.push(dup.status);
        latencies.get(t.delivery.desk)!.duplicate.push(dup.ms);
      }
    }

    await retryRefused(retryLater.splice(0), a.server);

    // Exactly once: each delivery's investigation, read from its history.
    const temporal = lazyClient(benchConfig, { pool });
    stops.push(() => temporal.close());
    stops.push(() => terminateAll(temporal.client, taskQueue));
    // Per investigation: the distinct events its customer-message signals carried, and how many
    // signals there were. A signal sent again for the same event (the first attempt's answer was
    // lost to a timeout, so the gate had not marked it delivered) is dropped by the workflow,
    // which keeps the event ids it has seen: it is counted apart, not as a duplicate message.
    const converter = temporal.client.options.loadedDataConverter;
    const received = new Map<string, { events: number; signals: number }>();
    for (let i = 0; i < tracked.length; i += 32) {
      await Promise.all(
        tracked.slice(i, i + 32).map(async (t) => {
          const history = await temporal.client.workflow
            .getHandle(t.workflowId)
            .fetchHistory()
            .catch(() => ({ events: [] }));
          const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage');
          const ids = new Set<string>();
          for (const signal of signals) {
            const [message] = await decodeHistoryPayloads(converter, signal.workflowExecutionSignaledEventAttributes?.input?.payloads);
            ids.add(String((message as { eventId?: unknown } | undefined)?.eventId));
          }
          received.set(t.workflowId, { events: ids.size, signals: signals.length });
        }),
      );
    }
    for (const desk of DESKS) {
      const mine = tracked.filter((t) => t.delivery.desk === desk);
      const answers: Record<string, number> = {};
      for (const s of mine.flatMap((t) => t.statuses)) answers[String(s)] = (answers[String(s)] ?? 0) + 1;
      const fresh = [...latencies.get(desk)!.fresh].sort((x, y) => x - y);
      const dup = [...latencies.get(desk)!.duplicate].sort((x, y) => x - y);
      result.rows.push({
        desk,
        deliveries: mine.length,
        sent: mine.reduce((sum, t) => sum + t.statuses.length, 0),
        answers,
        exactlyOnce: mine.filter((t) => received.get(t.workflowId)?.events === 1).length,
        lost: mine.filter((t) => (received.get(t.workflowId)?.events ?? 0) === 0).length,
        duplicated: mine.filter((t) => (received.get(t.workflowId)?.events ?? 0) > 1).length,
        resignalled: mine.reduce((sum, t) => sum + Math.max(0, (received.get(t.workflowId)?.signals ?? 0) - (received.get(t.workflowId)?.events ?? 0)), 0),
        freshP50Ms: round(percentile(fresh, 0.5)),
        freshP95Ms: round(percentile(fresh, 0.95)),
        duplicateP50Ms: round(percentile(dup, 0.5)),
        duplicateP95Ms: round(percentile(dup, 0.95)),
      });
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
  if (options.json) options.out(JSON.stringify(result, null, 2));
  else {
    const total = result.rows.reduce((sum, r) => sum + r.deliveries, 0);
    options.out(
      `desk delivery storm: ${total} deliveries one at a time over two replicas, 30 % redelivered to the other replica, Temporal down for ${result.outageSeconds} s in the middle (${result.refusedDuringOutage} answered 503, retried after), replica A restarted ${result.replicaRestarts} time(s):`,
    );
    alignedTable(
      ['desk', 'deliveries', 'sent', 'answers', 'exactly once', 'lost', 'duplicated', 're-signalled', 'fresh p50 ms', 'fresh p95 ms', 'dup p50 ms', 'dup p95 ms'],
      result.rows.map((r) => [
        r.desk,
        String(r.deliveries),
        String(r.sent),
        Object.entries(r.answers)
          .map(([s, c]) => `${s}x${c}`)
          .join(' '),
        String(r.exactlyOnce),
        String(r.lost),
        String(r.duplicated),
        String(r.resignalled),
        r.freshP50Ms.toFixed(2),
        r.freshP95Ms.toFixed(2),
        r.duplicateP50Ms.toFixed(2),
        r.duplicateP95Ms.toFixed(2),
      ]),
    ).forEach((line) => options.out(line));
    const lost = result.rows.reduce((sum, r) => sum + r.lost, 0);
    const duplicated = result.rows.reduce((sum, r) => sum + r.duplicated, 0);
    const dupP95 = Math.max(...result.rows.map((r) => r.duplicateP95Ms));
    options.out(`target 0 lost, 0 duplicated: ${lost === 0 && duplicated === 0 ? 'met' : 'NOT met'} (${lost} lost, ${duplicated} duplicated)`);
    options.out(`target duplicate accept p95 <= 10 ms one at a time: ${dupP95 <= 10 ? 'met' : 'NOT met'} (worst desk ${dupP95.toFixed(2)} ms)`);
  }
  return result;
}
