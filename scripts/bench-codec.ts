import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client as PgClient } from 'pg';
import type { Page } from 'playwright-core';
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

// `DATABASE_URL=postgres://… npx tsx scripts/bench-codec.ts [--steps 15] [--rounds 3] [--cold]`
// Opens the real Temporal web UI (the dev server's, CASEWORK_BENCH_TEMPORAL_PORT, default 7440,
// UI on +1000) in headless Chromium on an investigation by reference of about 150 events, in
// three ways, alternating within one run so machine load falls on each alike:
//  - no codec: the UI with no codec endpoint (ciphertext), the floor the UI sets by itself;
//  - codec, display cache off: every payload with a reference reads the transcript log;
//  - codec, display cache on: one read of the log per investigation serves the page.
// For each: the time from navigation until the event rows show, and until they show decoded
// payloads (a model reply's id, never in ciphertext); when the UI's last /decode was answered;
// the /decode calls and the CORS preflights the codec server answered; the bytes it sent; its
// time per call; and how long the page's main thread was busy (long tasks) until decoded rows.
// Each round opens a fresh browser context that has first loaded the UI's start page, as an
// operator's browser with the UI open has its scripts cached; --cold skips that, so the UI's
// own start-up (a few MB of scripts) is counted too.

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

type Mode = 'none' | 'uncached' | 'cached';
const MODES: Mode[] = ['none', 'uncached', 'cached'];
const LABEL: Record<Mode, string> = { none: 'no codec (ciphertext)', uncached: 'codec, display cache off', cached: 'codec, display cache on' };

interface Round {
  mode: Mode;
  rowsMs: number;
  decodedMs: number;
  settledMs: number;
  decodes: number;
  preflights: number;
  payloads: number;
  bytesOut: number;
  callP50: number;
  busyMs: number;
  logReads: number;
}

// Long tasks (main-thread work over 50 ms) since navigation, summed by the page itself.
const LONG_TASKS = `window.__busy = 0; new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__busy += e.duration; }).observe({ type: 'longtask', buffered: true });`;

/** Milliseconds from `opened` until `test` finds its text on the page, or NaN when it never does within the timeout. */
async function until(page: Page, opened: number, text: RegExp): Promise<number> {
  try {
    await page.getByText(text).first().waitFor({ state: 'visible', timeout: 120_000 });
    return performance.now() - opened;
  } catch {
    return NaN;
  }
}

async function main(): Promise<void> {
  const steps = flag('steps', 15);
  const rounds = flag('rounds', 3);
  const cold = process.argv.includes('--cold');
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
    const events = (await handle.fetchHistory()).events?.length ?? 0;

    const codec = codecFor(config);
    const converter = dataConverterFor(config, db.app, { codec });
    const historyUrl = `${server.uiUrl}/namespaces/default/workflows/${workflowId}/${runId}/history`;
    const table: Round[] = [];
    for (let round = 0; round < rounds * MODES.length; round++) {
      const mode = MODES[round % MODES.length]!;
      const expander = new DisplayExpander(openTranscriptLog(db.app, codec), { cache: mode === 'cached' });
      const handler = createCodecHandler({
        codecs: converter.payloadCodecs!,
        externalStorage: converter.externalStorage,
        customerKeys: customerKeysOf(db.app, codec),
        expander,
        allowedOrigins: [new URL(server.uiUrl).origin, new URL(server.uiUrl.replace('127.0.0.1', 'localhost')).origin],
      });
      const timings: number[] = [];
      let payloads = 0;
      let preflights = 0;
      let bytesOut = 0;
      let lastAnswer = 0;
      const codecServer = createServer((req: IncomingMessage, res: ServerResponse) => {
        if (req.method === 'OPTIONS') preflights++;
        if (req.method !== 'POST') return handler(req, res);
        const started = performance.now();
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          payloads += (body.match(/"metadata"/g) ?? []).length;
        });
        const write = res.write.bind(res);
        const end = res.end.bind(res);
        res.write = ((chunk: unknown, ...rest: unknown[]) => {
          if (chunk) bytesOut += Buffer.byteLength(chunk as string);
          return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
        }) as typeof res.write;
        res.end = ((chunk?: unknown, ...rest: unknown[]) => {
          if (chunk && typeof chunk !== 'function') bytesOut += Buffer.byteLength(chunk as string);
          return (end as (...a: unknown[]) => ServerResponse)(chunk, ...rest);
        }) as typeof res.end;
        res.on('finish', () => {
          timings.push(performance.now() - started);
          lastAnswer = performance.now();
        });
        handler(req, res);
      });
      await new Promise<void>((resolve) => codecServer.listen(0, '127.0.0.1', resolve));
      const endpoint = `http://127.0.0.1:${(codecServer.address() as AddressInfo).port}`;
      const context = await browser.newContext({ viewport: { width: 1400, height: 1200 } });
      if (mode !== 'none') {
        await context.addInitScript(
          `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(endpoint))}); localStorage.setItem('overrideRemoteCodecConfiguration', 'true');`,
        );
      }
      await context.addInitScript(LONG_TASKS);
      const page = await context.newPage();
      page.setDefaultTimeout(120_000);
      if (!cold) {
        // The UI's start page: its scripts and styles land in this context's cache, as in a browser with the UI open.
        await page.goto(`${server.uiUrl}/namespaces`);
        await page.waitForLoadState('networkidle');
      }
      const opened = performance.now();
      await page.goto(historyUrl);
      const [rowsMs, decodedMs] = await Promise.all([until(page, opened, /Activity Task Completed/), mode === 'none' ? Promise.resolve(NaN) : until(page, opened, /msg_off_/)]);
      const busyMs = await page.evaluate(() => (globalThis as unknown as { __busy: number }).__busy);
      // The UI's calls have stopped once nothing has been answered for a second.
      while (performance.now() - Math.max(lastAnswer, opened) < 1_000) await new Promise((r) => setTimeout(r, 100));
      const settledMs = mode === 'none' ? NaN : lastAnswer - opened;
      if (round >= (rounds - 1) * MODES.length) await page.screenshot({ path: join(ARTIFACTS, `bench-codec-${mode}.png`) });
      await context.close();
      await new Promise<void>((resolve) => codecServer.close(() => resolve()));
      table.push({
        mode,
        rowsMs,
        decodedMs,
        settledMs,
        decodes: timings.length,
        preflights,
        payloads,
        bytesOut,
        callP50: median(timings),
        busyMs,
        logReads: expander.stats.logReads,
      });
    }

    const row = (mode: Mode) => {
      const rs = table.filter((r) => r.mode === mode);
      const m = (f: (r: Round) => number) => median(rs.map(f));
      return { rows: m((r) => r.rowsMs), decoded: m((r) => r.decodedMs), rs, m };
    };
    console.log(`bench codec: ${events} history events (${steps} drill steps, by reference); ${rounds} rounds of each, alternating; Chromium headless`);
    const load = loadavg().map((l) => l.toFixed(1));
    console.log(`${cpus().length} CPUs, load average ${load.join(' ')} (1, 5, 15 min) at the end: the page's work is the browser's main thread, so it stretches with the load`);
    console.log(
      `UI ${server.uiUrl}; ${cold ? 'cold browser cache (the UI starts up in every round)' : "the UI's scripts cached (its start page loaded first)"}; times are medians from navigation\n`,
    );
    console.log('| page | event rows | decoded rows | last /decode answered | /decode calls | preflights | payloads | KB answered | call p50 | main thread busy | log reads |');
    console.log('| ---- | ---------- | ------------ | --------------------- | ------------ | ---------- | -------- | ----------- | -------- | ---------------- | --------- |');
    for (const mode of MODES) {
      const { m } = row(mode);
      console.log(
        `| ${LABEL[mode]} | ${ms(m((r) => r.rowsMs))} | ${ms(m((r) => r.decodedMs))} | ${ms(m((r) => r.settledMs))} | ${m((r) => r.decodes)} | ${m((r) => r.preflights)} | ${m((r) => r.payloads)} | ${Math.round(m((r) => r.bytesOut) / 1024)} | ${ms(m((r) => r.callP50))} | ${ms(m((r) => r.busyMs))} | ${m((r) => r.logReads)} |`,
      );
    }
    const floor = row('none').rows;
    const best = row('cached').decoded;
    console.log(
      `\ndecoded rows (cache on) / event rows without a codec = ${(best / floor).toFixed(2)}; the UI alone takes ${ms(floor)} to show rows on this machine${floor > 1_000 ? ', above the 1 s target before any decoding' : ''}`,
    );
    console.log(`screenshots: ${join(ARTIFACTS, 'bench-codec-{none,uncached,cached}.png')}`);
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
