import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createLocalEmbedder } from '../src/memory/embed-local';
import { createThreadedEmbedder } from '../src/memory/embed-thread';
import type { Embedder } from '../src/memory/embedder';

// `npx tsx scripts/bench-embed-blocking.ts [--notes 64] [--rounds 3]`
//
// How long a burst of writes holds the event loop while its notes are embedded by the local
// model, in this thread (createLocalEmbedder) and in a worker thread (createThreadedEmbedder),
// measured in one run. A 1 ms timer ticks throughout; a tick's lateness is how long the loop
// could not answer anything (a heartbeat, a query's reply, an HTTP request). The burst is
// --notes remember() calls at once, each embedding its own note, as a worker running that many
// activities side by side would.

const { values } = parseArgs({ options: { notes: { type: 'string', default: '64' }, rounds: { type: 'string', default: '3' } } });
const NOTES = Number(values.notes);
const ROUNDS = Number(values.rounds);
const text = (i: number) => `Order ${10_000 + i} arrived in a damaged box; the customer would like a replacement sent to Block B`;

interface Row {
  name: string;
  seconds: number;
  notesPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  blockedMs: number;
}

async function burst(name: string, embedder: Embedder): Promise<Row> {
  await embedder.embed(['warm up the model'], 'document');
  const lateness: number[] = [];
  let expected = performance.now() + 1;
  const timer = setInterval(() => {
    const now = performance.now();
    lateness.push(Math.max(0, now - expected));
    expected = now + 1;
  }, 1);
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(Array.from({ length: NOTES }, (_, i) => embedder.embed([text(round * NOTES + i)], 'document')));
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  lateness.sort((a, b) => a - b);
  const at = (p: number) => lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))] ?? 0;
  // Time the loop could not run at all: the sum of lateness beyond a 5 ms grace per tick.
  const blockedMs = lateness.reduce((sum, late) => sum + Math.max(0, late - 5), 0);
  return { name, seconds, notesPerSecond: (NOTES * ROUNDS) / seconds, p50: at(0.5), p99: at(0.99), max: lateness.at(-1) ?? 0, blockedMs };
}

async function main(): Promise<void> {
  const threaded = createThreadedEmbedder();
  const rows = [await burst('in this thread', createLocalEmbedder()), await burst('worker thread', threaded)];
  await threaded.close();
  console.log(`event loop during ${ROUNDS} bursts of ${NOTES} notes embedded at once (local all-MiniLM-L6-v2, int8 ONNX, 1 ONNX thread)`);
  console.log(
    `${'embedder'.padEnd(16)} ${'seconds'.padStart(8)} ${'notes/s'.padStart(8)} ${'tick late p50 ms'.padStart(17)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'blocked ms'.padStart(11)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(16)} ${r.seconds.toFixed(2).padStart(8)} ${r.notesPerSecond.toFixed(1).padStart(8)} ${r.p50.toFixed(2).padStart(17)} ${r.p99.toFixed(2).padStart(8)} ${r.max.toFixed(2).padStart(8)} ${r.blockedMs.toFixed(0).padStart(11)}`,
    );
  }
  const [inThread, worker] = rows as [Row, Row];
  console.log(
    `longest stall: ${(inThread.max / Math.max(worker.max, 0.01)).toFixed(1)}x shorter in a worker thread; throughput ratio worker/in-thread ${(worker.notesPerSecond / inThread.notesPerSecond).toFixed(2)}`,
  );
}

main().catch((error: Error) => {
  console.error(`bench embed blocking: ${error.message}`);
  process.exit(1);
});
