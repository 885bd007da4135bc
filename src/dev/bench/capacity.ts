import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import { deliverEvent } from '../../client/investigations';
import type { Config } from '../../config';
import { migrate } from '../../db/migrate';
import { openDatabase } from '../../db/pool';
import { investigationId, type TicketEvent } from '../../schemas/event';
import { investigationSettings } from '../../settings';
import { connectClient } from '../../temporal/client';
import { dataConverterFor, historyCodecFor, storageDriverFor } from '../../temporal/data-converter';
import type { Payload, SerializationContext, StorageDriver } from '@temporalio/common';
import { installTelemetry } from '../../observability/logging';
import { writeWorkflowBundle } from '../../worker';
import { seedDemoData } from '../demo-data/seed';
import { startDevServer } from '../env/dev-server';
import { startWorkerProcess, rssMb } from './capacity-process';
import { capacityTable, type CapacityResult, type CapacityRun, type LatencyStats, type RssSample, type WorkerShare } from './capacity-report';
import { followUpTimeline, signalTaskIdentity, type FollowUpTimeline } from './capacity-timeline';
import { startReplyReceiver, type ReplyReceiver } from './reply-receiver';
import { median, percentile } from './stats';

type Out = (line: string) => void;

export type { CapacityResult, CapacityRun } from './capacity-report';

/** The fractions of N at which the worker's memory is sampled. */
const MILESTONES = [0.1, 0.25, 0.5, 1];
const CUSTOMER = 'cust_dana';
const FIRST_MESSAGE =
  'Hi, my order 5102 shows as delivered on 12 October but it never arrived. Nothing on the doorstep, nothing with my neighbour at number 16, ' +
  'and the tracking has no photo. I have been a customer for years and this is the first time something like this has happened. Can you sort this out please?';
const FOLLOW_UP = 'Thanks. I asked at number 14 and 16 again and nobody has it. What happens next, and how long will the trace take?';

/** What `casework bench capacity` is asked for. */
export interface CapacityOptions {
  out: Out;
  /** Investigations opened per run (default 1,000). */
  cases?: number;
  /** The small workflow cache of the second run (default 100). */
  cacheSize?: number;
  /** Follow-ups sent per run, split between cached and evicted cases (default 50). */
  sample?: number;
  /** Cases opened at once (default 32). */
  concurrency?: number;
  /** Worker processes sharing the task queue (default 1); with more than one, only the small-cache run. */
  workers?: number;
  /** Only the small-cache run, for one worker too (--small-cache-only): a long run at many cases takes half the time. */
  smallCacheOnly?: boolean;
  json?: boolean;
}

const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

/** Runs `fn` over `items` with at most `limit` at once, in order of start. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await fn(items[index]!, index);
      }
    }),
  );
}

/** Up to `n` items of `pool`, picked at random without repeats. */
function pick<T>(pool: readonly T[], n: number): T[] {
  const copy = [...pool];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}

function latencyStats(samples: { ms: number; modelMs: number; replies: number }[]): LatencyStats {
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const total = sorted(samples.map((s) => s.ms));
  const model = sorted(samples.map((s) => s.modelMs));
  const orchestration = sorted(samples.map((s) => s.ms - s.modelMs));
  return {
    n: samples.length,
    replies: samples.map((s) => s.replies),
    p50: round(percentile(total, 0.5)),
    p95: round(percentile(total, 0.95)),
    modelP50: round(percentile(model, 0.5), 2),
    modelP95: round(percentile(model, 0.95), 2),
    orchestrationP50: round(percentile(orchestration, 0.5)),
    orchestrationP95: round(percentile(orchestration, 0.95)),
  };
}

/** Payloads through one stage of the data converter, and the milliseconds spent there. */
interface Counted {
  payloads: number;
  ms: number;
}

/**
 * The bench's replay data converter, the worker's own (the same codec and payload store), with
 * each stage counted: payloads decrypted, payloads encrypted (a replay encodes the commands it
 * makes again, as the worker does, though the server already has them), and payloads fetched
 * from the payload store.
 */
function countingParts(config: Config, pool: Pool): { dataConverter: ReturnType<typeof dataConverterFor>; decoded: Counted; encoded: Counted; fetched: Counted } {
  const decoded: Counted = { payloads: 0, ms: 0 };
  const encoded: Counted = { payloads: 0, ms: 0 };
  const fetched: Counted = { payloads: 0, ms: 0 };
  const timed = async <T>(into: Counted, n: number, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await fn();
    } finally {
      into.payloads += n;
      into.ms += performance.now() - started;
    }
  };
  // The worker's history codec: customers' keys (looked up once, then cached) where its payloads are under them.
  const codec = historyCodecFor(config, pool);
  // The serialization context names the investigation, whose customer's key the codec encrypts under.
  const countingCodec = {
    encode: (payloads: Payload[], context?: SerializationContext) => timed(encoded, payloads.length, () => codec.encode(payloads, context)),
    decode: (payloads: Payload[]) => timed(decoded, payloads.length, () => codec.decode(payloads)),
  };
  const store = storageDriverFor(config, pool);
  const driver: StorageDriver | undefined = store && {
    name: store.name,
    type: store.type,
    store: (context, payloads) => store.store(context, payloads),
    retrieve: (context, claims) => timed(fetched, claims.length, () => store.retrieve(context, claims)),
  };
  return { dataConverter: dataConverterFor(config, pool, { codec: countingCodec, ...(driver ? { driver } : {}) }), decoded, encoded, fetched };
}

interface RunContext {
  config: Config;
  client: Client;
  pool: Pool;
  receiver: ReplyReceiver;
  bundlePath: string;
  childEnv: NodeJS.ProcessEnv;
  tag: string;
  cases: number;
  sample: number;
  concurrency: number;
  workers: number;
}

function ticketEvent(ticketId: string, eventId: string, message: string, type: TicketEvent['type']): TicketEvent {
  return { eventId, type, ticketId, customerId: CUSTOMER, message, receivedAt: new Date().toISOString() };
}

/** One run: opens N cases, samples RSS, sends follow-ups, replays a sample, measures history. */
async function oneRun(ctx: RunContext, cache: 'default' | number, out: Out): Promise<CapacityRun> {
  const label = cache === 'default' ? 'default' : `c${cache}`;
  const taskQueue = `capacity-${ctx.tag}-${label}`;
  const config = { ...ctx.config, TEMPORAL_TASK_QUEUE: taskQueue };
  const settings = investigationSettings(config);
  const loadBefore = loadavg().map((v) => round(v, 2));
  const workers = await Promise.all(
    Array.from({ length: ctx.workers }, () =>
      startWorkerProcess({
        ...ctx.childEnv,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ...(cache === 'default' ? {} : { CASEWORK_WORKFLOW_CACHE_SIZE: String(cache) }),
      }),
    ),
  );
  // The model's time per ticket, gathered from every worker (a follow-up may run on any of them).
  const modelMs: Record<string, number> = {};
  const statuses = async (gc = false) => {
    const all = await Promise.all(workers.map((w) => w.status(gc)));
    for (const s of all) Object.assign(modelMs, s.modelMs);
    return all;
  };
  try {
    // Opening: each case is answered (its reply reaches the desk) before it counts as open.
    const tickets = Array.from({ length: ctx.cases }, (_, i) => `cap-${ctx.tag}-${label}-${i}`);
    const answered: string[] = [];
    // The idle workers first: what they hold before any case is open.
    const sample = async (open: number): Promise<RssSample> => {
      const mbs = workers.map((w) => round(rssMb(w.pid)));
      const all = await statuses(true);
      const perWorker = all.map((s, i) => ({ rssMb: mbs[i]!, cached: s.cached }));
      return {
        open,
        rssMb: round(mbs.reduce((a, b) => a + b, 0)),
        heapMb: round(all.reduce((a, s) => a + s.heapMb, 0)),
        cached: all.reduce((a, s) => a + s.cached, 0),
        ...(workers.length > 1 ? { perWorker } : {}),
      };
    };
    const rss: RssSample[] = [await sample(0)];
    const marks = MILESTONES.map((f) => Math.max(1, Math.round(f * ctx.cases)));
    const started = performance.now();
    await eachLimited(tickets, ctx.concurrency, async (ticketId) => {
      const event = ticketEvent(ticketId, `${ticketId}-1`, `[case ${ticketId}] ${FIRST_MESSAGE}`, 'ticket.created');
      await deliverEvent(ctx.client, ctx.pool, event, { taskQueue, settings });
      await ctx.receiver.waitFor(investigationId(ticketId), 1, 300_000);
      answered.push(ticketId);
      if (marks.includes(answered.length)) {
        const s = await sample(answered.length);
        rss.push(s);
        const each = s.perWorker ? ` (${s.perWorker.map((w) => `${w.rssMb} MB, ${w.cached} cached`).join('; ')})` : '';
        out(
          `  [cache ${cache}] ${s.open} cases open after ${round((performance.now() - started) / 1000)} s: worker RSS ${s.rssMb} MB, main-thread heap after GC ${s.heapMb} MB, ${s.cached} cached${each}`,
        );
      }
    });
    const openSeconds = (performance.now() - started) / 1000;
    await statuses(); // clears the opening's model times
    for (const key of Object.keys(modelMs)) delete modelMs[key];

    // Which cases are still cached: the cache is least-recently-used, so the last answered are
    // in it and the first answered are not. Cases near the boundary are left out of both: while
    // several are open at once, the order of their last tasks is not quite their answers' order.
    // Across workers: each keeps its own least-recently-used cache of the cases it ran last.
    const slots = workers.reduce((n, w) => n + w.cacheSlots, 0);
    const half = Math.ceil(ctx.sample / 2);
    const margin = Math.min(ctx.concurrency, Math.floor(slots / 2));
    const inCache = answered.slice(Math.max(0, answered.length - Math.floor(slots / 2)));
    const outOfCache = answered.length > slots ? answered.slice(0, Math.max(0, answered.length - slots - margin)) : [];
    const evictedPick = pick(outOfCache, half);
    const cachedPick = pick(inCache, ctx.sample - evictedPick.length);
    // Epoch times of each follow-up's send and reply, to set against its history's event times.
    const sentAt = new Map<string, number>();
    const replyAt = new Map<string, number>();
    // Cached ones first: a follow-up to an evicted case pushes the least recent case out, never a recent one.
    const followUp = async (ticketId: string) => {
      const workflowId = investigationId(ticketId);
      const sent = performance.now();
      sentAt.set(workflowId, performance.timeOrigin + sent);
      await deliverEvent(ctx.client, ctx.pool, ticketEvent(ticketId, `${ticketId}-2`, FOLLOW_UP, 'ticket.message'), { taskQueue, settings });
      const reply = await ctx.receiver.waitFor(workflowId, 2, 120_000);
      replyAt.set(workflowId, performance.timeOrigin + reply.at);
      await statuses();
      return { ticketId, ms: reply.at - sent, modelMs: modelMs[ticketId] ?? 0, replies: ctx.receiver.replies(workflowId).filter((r) => r.sequence > 1).length };
    };
    type Sample = Awaited<ReturnType<typeof followUp>>;
    const cachedSamples: Sample[] = [];
    for (const t of cachedPick) cachedSamples.push(await followUp(t));
    const evictedSamples: Sample[] = [];
    for (const t of evictedPick) evictedSamples.push(await followUp(t));
    // A late duplicate would show up here: give the desk a moment, then count again.
    await new Promise((r) => setTimeout(r, 500));
    const recount = (ticketIds: string[], samples: { replies: number }[]) =>
      ticketIds.forEach((t, i) => (samples[i]!.replies = ctx.receiver.replies(investigationId(t)).filter((r) => r.sequence > 1).length));
    recount(cachedPick, cachedSamples);
    recount(evictedPick, evictedSamples);

    // History per case, and replay time per workflow, over the followed-up cases.
    const sampled = [...cachedPick, ...evictedPick].map(investigationId);
    const sizes = [];
    for (const id of sampled) {
      const described = await ctx.client.workflow.getHandle(id).describe();
      sizes.push({ events: described.historyLength, bytes: Number(described.raw.workflowExecutionInfo?.historySizeBytes ?? 0) });
    }
    const histories: { workflowId: string; history: Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>> }[] = [];
    for (const id of sampled) histories.push({ workflowId: id, history: await ctx.client.workflow.getHandle(id).fetchHistory() });
    const timelineOf = (ids: string[]) =>
      ids
        .map(investigationId)
        .map((id) => followUpTimeline(histories.find((h) => h.workflowId === id)?.history.events ?? [], sentAt.get(id) ?? NaN, replyAt.get(id) ?? NaN))
        .filter((t): t is FollowUpTimeline => t !== null);
    // Which worker resumed each evicted case: the identity on its signal's workflow task.
    const shares: WorkerShare[] = workers.map((w, i) => {
      const mine = evictedSamples.filter((e) => {
        const events = histories.find((h) => h.workflowId === investigationId(e.ticketId))?.history.events ?? [];
        return signalTaskIdentity(events) === w.identity;
      });
      const last = rss[rss.length - 1]!.perWorker?.[i];
      return {
        worker: i + 1,
        identity: w.identity,
        rssMb: last?.rssMb ?? rss[rss.length - 1]!.rssMb,
        cached: last?.cached ?? rss[rss.length - 1]!.cached,
        evicted: latencyStats(mine),
      };
    });
    // The first history is replayed twice and its first time dropped: it includes the replay worker's start.
    const replayMs: number[] = [];
    const counted = countingParts(config, ctx.pool);
    let mark = performance.now();
    const replays = Worker.runReplayHistories({ workflowBundle: { codePath: ctx.bundlePath }, dataConverter: counted.dataConverter }, [...histories.slice(0, 1), ...histories]);
    for await (const result of replays) {
      if (result.error) throw new Error(`replaying ${result.workflowId} failed: ${result.error.message}`);
      const now = performance.now();
      replayMs.push(now - mark);
      mark = now;
    }
    replayMs.shift();
    const replayed = histories.length + 1;
    const sortedReplay = [...replayMs].sort((a, b) => a - b);
    const bytes = sizes.map((s) => s.bytes).sort((a, b) => a - b);
    const lost = histories.map((h) => (h.history.events ?? []).filter((e) => e.workflowTaskTimedOutEventAttributes).length);

    // Memory per added case while the cache filled and once it was full.
    const slope = (a: RssSample, b: RssSample) => ((b.rssMb - a.rssMb) * 1024) / (b.open - a.open);
    // The cache is full at the first sample holding as many cases as it has slots.
    const fullAt = rss.findIndex((r) => r.open >= slots);
    const last = rss[rss.length - 1]!;
    const kbPerCase = {
      filling: round(slope(rss[0]!, fullAt === -1 ? last : rss[fullAt]!)),
      full: fullAt !== -1 && fullAt < rss.length - 1 ? round(slope(rss[fullAt]!, last)) : null,
    };
    return {
      cache,
      cacheSlots: slots,
      workers: shares,
      cases: ctx.cases,
      openSeconds: round(openSeconds),
      loadBefore,
      loadAfter: loadavg().map((v) => round(v, 2)),
      rss,
      cached: latencyStats(cachedSamples),
      evicted: latencyStats(evictedSamples),
      replay: {
        n: replayMs.length,
        p50: round(percentile(sortedReplay, 0.5)),
        p95: round(percentile(sortedReplay, 0.95)),
        events: median(sizes.map((s) => s.events)),
        decodedPerWorkflow: round(counted.decoded.payloads / replayed),
        decodeMsPerWorkflow: round(counted.decoded.ms / replayed, 2),
        encodedPerWorkflow: round(counted.encoded.payloads / replayed),
        encodeMsPerWorkflow: round(counted.encoded.ms / replayed, 2),
        fetchedPerWorkflow: round(counted.fetched.payloads / replayed),
        fetchMsPerWorkflow: round(counted.fetched.ms / replayed, 2),
      },
      timelines: { cached: timelineOf(cachedPick), evicted: timelineOf(evictedPick) },
      history: {
        n: sizes.length,
        medianBytes: median(bytes),
        maxBytes: bytes[bytes.length - 1] ?? 0,
        medianEvents: median(sizes.map((s) => s.events)),
        lostTasks: lost.reduce((a, b) => a + b, 0),
        casesLosingTasks: lost.filter((l) => l > 0).length,
      },
      kbPerCase,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    out(`  (run with cache ${cache} done)`);
  }
}

/**
 * `casework bench capacity`: how many open investigations one worker holds. Starts a Temporal
 * dev server (or uses the one at TEMPORAL_ADDRESS) and, per run, the real worker in a child
 * process with the capacity drill model; opens N investigations that end waiting for the
 * customer, sampling the worker's RSS at 10, 25, 50 and 100 % of N; then sends follow-ups to a
 * random sample of cached and evicted cases and times each to its reply at the desk, replays the
 * sampled histories, and measures history per case. One run with a workflow cache of
 * `cacheSize`, then one with the default. Needs DATABASE_URL: the worker process and the bench share Postgres.
 */
export async function runCapacityBench(config: Config, options: CapacityOptions): Promise<CapacityResult> {
  const out = options.out;
  if (!config.DATABASE_URL) throw new Error('casework bench capacity needs DATABASE_URL: its worker runs in a process of its own, so the embedded database cannot be shared');
  const cases = options.cases ?? 1000;
  const cacheSize = options.cacheSize ?? 100;
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`--workers must be a whole number of at least 1, got ${workers}`);
  if (cacheSize < 2) throw new Error(`--cache-size must be at least 2 (the SDK's smallest cache), got ${cacheSize}`);
  const tag = Date.now().toString(36);
  const secret = randomBytes(16).toString('hex');
  const keys = config.CASEWORK_CODEC_KEYS ?? `capacity-${tag}:${randomBytes(32).toString('base64')}`;
  const benchConfig: Config = { ...config, CASEWORK_CODEC_KEYS: keys, CASEWORK_DESKS: 'webhook', CASEWORK_EMBEDDINGS: 'off' };
  const [, portText] = config.TEMPORAL_ADDRESS.split(':');
  // The replay worker's state changes are not the bench's output.
  installTelemetry({ ...benchConfig, CASEWORK_LOG_LEVEL: 'warn', CASEWORK_METRICS_PORT: 0 });
  const server = await startDevServer({ port: Number(portText || 7233), headless: true });
  const stops: (() => Promise<unknown>)[] = [() => server.stop()];
  try {
    const db = await openDatabase(benchConfig);
    stops.push(() => db.close());
    await migrate(db.admin);
    await seedDemoData(db.admin);
    const receiver = await startReplyReceiver(secret);
    stops.push(() => receiver.close());
    let bundlePath = config.CASEWORK_WORKFLOW_BUNDLE;
    if (!bundlePath) {
      bundlePath = join(tmpdir(), `casework-capacity-${process.pid}-${tag}.js`);
      const path = bundlePath;
      await writeWorkflowBundle(path);
      stops.push(async () => rmSync(path, { force: true }));
    }
    const { client, close } = await connectClient(benchConfig, { pool: db.app });
    stops.push(close);
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
      DATABASE_URL: config.DATABASE_URL,
      CASEWORK_CODEC_KEYS: keys,
      CASEWORK_DESKS: 'webhook',
      CASEWORK_DESK_WEBHOOK_URL: receiver.url,
      CASEWORK_DESK_WEBHOOK_SECRET: secret,
      CASEWORK_EMBEDDINGS: 'off',
      CASEWORK_WORKFLOW_BUNDLE: bundlePath,
      CASEWORK_LOG_LEVEL: 'warn',
      CASEWORK_METRICS_PORT: '0',
    };
    const ctx: RunContext = {
      config: benchConfig,
      client,
      pool: db.app,
      receiver,
      bundlePath,
      childEnv,
      tag,
      cases,
      sample: options.sample ?? 50,
      concurrency: options.concurrency ?? 32,
      workers,
    };
    const runs: CapacityRun[] = [];
    // The small cache first: its evicted cases are the point, and a long run may be cut short.
    // Several workers at the SDK's default cache would each hold gigabytes (2,310 workflows at
    // about 4 GB in one process): the fleet run is the small cache's only.
    const caches: ('default' | number)[] = workers > 1 || options.smallCacheOnly ? [cacheSize] : [cacheSize, 'default'];
    for (const cache of caches) {
      const run = await oneRun(ctx, cache, options.json ? () => undefined : out);
      runs.push(run);
      if (!options.json) {
        out('');
        for (const line of capacityTable(run)) out(line);
        out('');
      }
    }
    const result: CapacityResult = { model: 'capacity drill (scripted test double)', runs };
    if (options.json) out(JSON.stringify(result, null, 2));
    return result;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}
