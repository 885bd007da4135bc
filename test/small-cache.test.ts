import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Database } from '../src/db/pool';
import { localActivityOf } from '../src/temporal/history-payloads';
import { EMBEDDED_SHARED_SESSION, openTestDatabase } from './support/db';
import { example, send } from './support/investigate';
import { recordingModel, startTestWorker, type TestWorker } from './support/temporal';

// A worker whose investigation cache is small next to the cases it runs at once. A model call
// runs as a local activity inside its workflow task, and the cache evicts its least recently
// used case to make room: a case evicted while its calls are in flight loses that task, which
// the server times out 4 s later, and its replay runs the calls again. The worker bounds the
// tasks it runs at once to a quarter of its cache (src/worker.ts), and a local call finds the
// reply an earlier run of it kept (src/activities/transcript-log.ts). Without the first, this
// run lost 14 tasks; without the second, the model was asked 254 times for 240 steps.

const CACHE = 8;
const CASES = 24;
let db: Database;
let tw: TestWorker;
const model = recordingModel();

before(async () => {
  db = await openTestDatabase({ seed: true });
  tw = await startTestWorker({ pool: db.app, model, env: { CASEWORK_WORKFLOW_CACHE_SIZE: String(CACHE) } });
});
after(async () => {
  await tw?.stop();
  await db?.close();
});

// The embedded Postgres runs every connection on one session, where 24 cases opened at once
// interleave their queries ("portal does not exist"); a real server (DATABASE_URL, as in CI) is needed.
const EMBEDDED = EMBEDDED_SHARED_SESSION && 'the embedded Postgres serves one session; 24 cases at once need DATABASE_URL';

test(`${CASES} cases opened at once on a worker caching ${CACHE} lose no workflow task, and the model is asked once a step`, { skip: EMBEDDED }, async () => {
  const opened = await Promise.all(Array.from({ length: CASES }, () => send(tw, example('dana-5102'))));
  assert.ok(
    opened.every((s) => s.status === 'awaiting_approval' || s.status === 'waiting_for_customer'),
    opened.map((s) => s.status).join(', '),
  );
  // The investigation's own calls (memory's supersede checks and sub-agents' reads are others).
  const asked = () => model.requests.filter((r) => r.purpose === 'investigate').length;
  let timedOut = 0;
  let failedTasks = 0;
  let modelSteps = 0;
  const converter = tw.client.options.loadedDataConverter;
  for (const status of opened) {
    const events = (await tw.client.workflow.getHandle(status.workflowId).fetchHistory()).events ?? [];
    timedOut += events.filter((e) => e.workflowTaskTimedOutEventAttributes).length;
    failedTasks += events.filter((e) => e.workflowTaskFailedEventAttributes).length;
    // Each recorded model step is one marker of callModelOnPlan.
    for (const event of events) if ((await localActivityOf(converter, event))?.activity_type === 'callModelOnPlan') modelSteps += 1;
  }
  assert.equal(timedOut, 0, `workflow tasks timed out (the model was asked ${asked()} times for ${modelSteps} recorded steps; ${failedTasks} failed tasks)`);
  assert.equal(asked(), modelSteps, 'model calls made against model steps recorded');
});
