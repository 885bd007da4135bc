import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runEventsBench } from '../src/dev/bench/events';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db/pool';
import { startDevServer } from '../src/dev/env/dev-server';
import { lazyClient, startServer } from '../src/server/start';

// `npx tsx scripts/bench-events.ts [--url http://host:port --key KEY] [--count N] [--concurrency 1,8,32] [--json]`
//
// With --url: benches that running endpoint. Without: starts (or reuses) the Temporal dev server
// at TEMPORAL_ADDRESS and an endpoint in this process on a task queue of its own with no worker,
// so the figures are the endpoint's and Temporal's acceptance of events (signal-with-start),
// not how fast investigations run. Workflows it starts on a reused server are terminated after.

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { url: { type: 'string' }, key: { type: 'string' }, count: { type: 'string' }, concurrency: { type: 'string' }, json: { type: 'boolean' } },
  });
  const count = Number(values.count ?? 500);
  const concurrency = (values.concurrency ?? '1,8,32,64').split(',').map(Number);
  if (!Number.isInteger(count) || count < 1 || concurrency.some((c) => !Number.isInteger(c) || c < 1)) {
    console.error('--count and --concurrency take positive whole numbers, e.g. --count 500 --concurrency 1,8,32');
    return 2;
  }
  const out = (line: string) => console.log(line);
  if (values.url) {
    await runEventsBench({ url: values.url.replace(/\/$/, ''), apiKey: values.key ?? process.env.CASEWORK_BENCH_KEY, count, concurrency, out, json: values.json });
    return 0;
  }

  const base = loadConfig();
  const apiKey = randomBytes(24).toString('hex');
  const taskQueue = `casework-bench-events-${Date.now().toString(36)}`;
  const config = { ...base, TEMPORAL_TASK_QUEUE: taskQueue, CASEWORK_API_KEYS: `${apiKey}:*`, CASEWORK_LOG_LEVEL: 'warn' as const };
  const [host, port] = config.TEMPORAL_ADDRESS.split(':');
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`without --url the bench uses a local dev server; TEMPORAL_ADDRESS is ${config.TEMPORAL_ADDRESS}`);
  const dev = await startDevServer({ port: Number(port || 7233), uiPort: Number(new URL(config.TEMPORAL_UI_URL).port || 8233) });
  const db = await openDatabase(config, { dataDir: 'memory://' });
  const temporal = lazyClient(config, { pool: db.app });
  const server = await startServer({ client: temporal.client, pool: db.app, config, log: () => undefined }, 0);
  try {
    if (!values.json)
      console.log(
        `endpoint ${server.url} -> Temporal ${config.TEMPORAL_ADDRESS} (${dev.startedHere ? 'dev server started for this bench' : 'existing server'}), task queue ${taskQueue} (no worker)`,
      );
    await runEventsBench({ url: server.url, apiKey, count, concurrency, out, json: values.json });
  } finally {
    await server.close();
    if (!dev.startedHere) {
      // Leave a reused server as we found it: nothing polls this queue, so these runs would wait forever.
      const ids: string[] = [];
      for await (const w of temporal.client.workflow.list({ query: `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"` })) ids.push(w.workflowId);
      for (let i = 0; i < ids.length; i += 50) {
        await Promise.allSettled(ids.slice(i, i + 50).map((id) => temporal.client.workflow.getHandle(id).terminate('casework bench events: cleanup')));
      }
    }
    await temporal.close();
    await db.close();
    await dev.stop();
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`bench-events: ${error.message}`);
    process.exit(1);
  },
);
