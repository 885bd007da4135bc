import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client as PgClient } from 'pg';
import { deliverEvent, waitUntilSettled } from '../src/client/investigations';
import { loadConfig } from '../src/config';
import { migrate } from '../src/db/migrate';
import { openDatabase } from '../src/db/pool';
import { seedDemoData } from '../src/dev/demo-data/seed';
import { startDevServer } from '../src/dev/env/dev-server';
import { createOfflineModel } from '../src/model/offline';
import { parseTicketEvent } from '../src/schemas/event';
import { DisplayExpander } from '../src/server/codec-expansion';
import { createCodecHandler } from '../src/server/codec-server';
import { investigationSettings } from '../src/settings';
import { customerKeysOf, openTranscriptLog } from '../src/temporal/codec/body-codec';
import { codecFor, dataConverterFor } from '../src/temporal/data-converter';
import { startInProcessWorker } from '../src/worker';
import { ARTIFACTS, launchChromium } from '../test/support/chromium';

// `DATABASE_URL=postgres://… npx tsx scripts/bench-codec.ts [--steps 15] [--rounds 3]`
// Opens the real Temporal web UI (the dev server's, CASEWORK_BENCH_TEMPORAL_PORT, default 7440,
// UI on +1000) in headless Chromium on an investigation by reference of about 150 events, with
// the real codec server set as the UI's codec endpoint, and measures, for the display cache off
// (every payload with a reference reads the log) and on (one read per investigation):
//  - page: from navigation until the event rows show decoded payloads, and until the UI's
//    /decode calls stop (each payload decoded and, where it refers to the log, expanded);
//  - the /decode calls the page made, their payloads, and their time at the server (p50, max);
//  - how often the transcript log was read.
// Rounds alternate off/on, each in a fresh browser context (nothing cached in the browser).

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive whole number`);
  return value;
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new PgClient({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : NaN);
const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : '—');

interface Round {
  cache: boolean;
  shownMs: number;
  settledMs: number;
  calls: number;
  payloads: number;
  callP50: number;
  callMax: number;
  logReads: number;
}

async function main(): Promise<void> {
  const steps = flag('steps', 15);
  const rounds = flag('rounds', 3);
  const base = loadConfig();
  if (!base.DATABASE_URL) throw new Error('set DATABASE_URL to a Postgres server this bench may create a database on');
  const name = `casework_bench_codec_${process.pid}`;
  await admin(base.DATABASE_URL, `CREATE DATABASE ${name}`);
  const url = new URL(base.DATABASE_URL);
  url.pathname = `/${name}`;
  const port = Number(process.env.CASEWORK_BENCH_TEMPORAL_PORT ?? 7440);
  const server = await startDevServer({ port, uiPort: port + 1000 });
  const config = loadConfig({ ...process.env, DATABASE_URL: url.toString(), TEMPORAL_ADDRESS: server.address, TEMPORAL_TASK_QUEUE: `bench-codec-${process.pid}` });
  const db = await openDatabase(config);
  let worker: Awaited<ReturnType<typeof startInProcessWorker>> | undefined;
  const browser = await launchChromium();
  try {
    await migrate(db.admin);
    await seedDemoData(db.admin);
    worker = await startInProcessWorker({ config, pool: db.app, model: createOfflineModel() });
    const event = parseTicketEvent({
      eventId: `bench-codec-${process.pid}`,
      type: 'ticket.created',
      ticketId: `T-bench-${process.pid}`,
      customerId: 'cust_dana',
      message: `Scripted long investigation of order 5102. #drill:${steps}`,
      receivedAt: new Date().toISOString(),
    });
    const workflowId = `investigation-${event.ticketId}`;
    const settings = investigationSettings(config);
    await deliverEvent(worker.client, db.app, event, { taskQueue: config.TEMPORAL_TASK_QUEUE, settings });
    await waitUntilSettled(worker.client, workflowId, { afterStep: steps, timeoutMs: 600_000 });
    const handle = worker.client.workflow.getHandle(workflowId);
    const { runId } = await handle.describe();
    const history = await handle.fetchHistory();
    const events = history.events?.length ?? 0;

    // A phrase only a whole tool result holds: text past the first result's 100-character preview.
    const codec = codecFor(config);
    const log = openTranscriptLog(db.app, codec);
    const results = (await log.all(workflowId, ['message'])).map((e) => e.body as { type: string; content?: unknown }).filter((b) => b.type === 'tool_result');

    const converter = dataConverterFor(config, db.app, { codec });
    const historyUrl = `${server.uiUrl}/namespaces/default/workflows/${workflowId}/${runId}/history`;
    const table: Round[] = [];
    for (let round = 0; round < rounds * 2; round++) {
      const cache = round % 2 === 1;
      const expander = new DisplayExpander(openTranscriptLog(db.app, codec), { cache });
      const handler = createCodecHandler({
        codecs: converter.payloadCodecs!,
        externalStorage: converter.externalStorage,
        customerKeys: customerKeysOf(db.app, codec),
        expander,
        allowedOrigins: [new URL(server.uiUrl).origin, new URL(server.uiUrl.replace('127.0.0.1', 'localhost')).origin],
      });
      const timings: number[] = [];
      let payloads = 0;
      let lastAnswer = 0;
      const codecServer = createServer((req: IncomingMessage, res: ServerResponse) => {
        if (req.method !== 'POST') return handler(req, res);
        const started = performance.now();
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          payloads += (body.match(/"metadata"/g) ?? []).length;
        });
        res.on('finish', () => {
          timings.push(performance.now() - started);
          lastAnswer = performance.now();
        });
        handler(req, res);
      });
      await new Promise<void>((resolve) => codecServer.listen(0, '127.0.0.1', resolve));
      const endpoint = `http://127.0.0.1:${(codecServer.address() as AddressInfo).port}`;
      const context = await browser.newContext({ viewport: { width: 1400, height: 1200 } });
      await context.addInitScript(
        `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(endpoint))}); localStorage.setItem('overrideRemoteCodecConfiguration', 'true');`,
      );
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      const opened = performance.now();
      await page.goto(historyUrl);
      // The event rows' summaries show decoded payloads: a model reply's id is never in ciphertext.
      await page
        .getByText(/msg_off_/)
        .first()
        .waitFor({ state: 'attached' });
      const shownMs = performance.now() - opened;
      // The UI's calls have stopped once nothing has been answered for a second.
      while (performance.now() - Math.max(lastAnswer, opened) < 1_000) await new Promise((r) => setTimeout(r, 100));
      const settledMs = lastAnswer - opened;
      if (round === rounds * 2 - 1) await page.screenshot({ path: join(ARTIFACTS, 'bench-codec-page.png'), fullPage: true });
      await context.close();
      await new Promise<void>((resolve) => codecServer.close(() => resolve()));
      table.push({ cache, shownMs, settledMs, calls: timings.length, payloads, callP50: median(timings), callMax: Math.max(...timings), logReads: expander.stats.logReads });
    }

    console.log(`bench codec: ${events} history events (${steps} drill steps, by reference), ${results.length} tool results in the log; ${rounds} rounds each, alternating`);
    console.log(`UI ${server.uiUrl}, Chromium headless; times are medians over the rounds\n`);
    console.log('| display cache | decoded rows on the page | last /decode answered | /decode calls | payloads | call p50 | call max | log reads |');
    console.log('| ------------- | ------------------------ | --------------------- | ------------- | -------- | -------- | -------- | --------- |');
    for (const cache of [false, true]) {
      const rs = table.filter((r) => r.cache === cache);
      console.log(
        `| ${cache ? 'on (one read per investigation)' : 'off (a read per payload)'} | ${ms(median(rs.map((r) => r.shownMs)))} | ${ms(median(rs.map((r) => r.settledMs)))} | ${median(rs.map((r) => r.calls))} | ${median(rs.map((r) => r.payloads))} | ${ms(median(rs.map((r) => r.callP50)))} | ${ms(median(rs.map((r) => r.callMax)))} | ${median(rs.map((r) => r.logReads))} |`,
      );
    }
    console.log(`\nscreenshot: ${join(ARTIFACTS, 'bench-codec-page.png')}`);
  } finally {
    await browser.close();
    await worker?.stop();
    await db.close();
    await server.stop();
    await admin(base.DATABASE_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(`bench codec failed: ${error.stack ?? error.message}`);
    process.exit(1);
  },
);
