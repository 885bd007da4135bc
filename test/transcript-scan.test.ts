import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { nextFreeSeq, TranscriptLog } from '../src/db/transcript-log';
import type { Database } from '../src/db/pool';
import { scanTranscript } from '../src/dev/soak/transcript-scan';
import { investigationId } from '../src/schemas/event';
import { bodyCodecOf } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { settingsWith, ticket } from './support/investigate';
import { reply, scriptedModel, text, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { openTestDatabase } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// The soak's last check reads every investigation back and looks for infrastructure text (socket
// errors, hosts, stack frames) in what it said and in the tool results its model was shown. By
// reference (the default) those results are whole only in the transcript log, and the replies
// are callModelOnPlan results: the scan must read both, or the check passes on nothing.

describe('the soak transcript scan, by reference', () => {
  const model = scriptedModel();
  let db: Database;
  let tw: TestWorker;
  let log: TranscriptLog;

  before(async () => {
    db = await openTestDatabase({ seed: true });
    tw = await startTestWorker({ pool: db.app, model });
    log = new TranscriptLog(db.admin, bodyCodecOf(codecFor(tw.config)));
  });
  after(async () => {
    await tw?.stop();
    await db?.close();
  });

  test('reads the tool results the model was shown and its replies, and finds infrastructure text in a result', async () => {
    const event = ticket('cust_dana', 'Where is my order 5102?');
    const workflowId = investigationId(event.ticketId);
    model.script(workflowId, [reply([text('Let me look that order up.'), toolUse('get_order', { order_id: '5102' })]), reply([text('It was delivered on 12 October.')])]);
    const settled = await deliver(tw, model, event, settingsWith());
    assert.equal(settled.status, 'waiting_for_customer');

    const clean = await scanTranscript(tw.client, workflowId, 'It was delivered on 12 October.', log);
    assert.equal(clean.toolResults, 1, 'the get_order result, read from the log');
    assert.equal(clean.replies, 2, 'the text before the tool call and the answer');
    assert.deepEqual(clean.findings, []);

    // A result that leaked the outage's words, as a tool that let a socket error through would write it.
    await log.write(workflowId, [
      {
        seq: await nextFreeSeq(db.admin, workflowId),
        kind: 'message',
        role: 'user',
        body: { type: 'tool_result', tool_use_id: 'toolu_leak', content: 'lookup failed: connect ECONNREFUSED' },
        tokens: 8,
      },
    ]);
    const leaked = await scanTranscript(tw.client, workflowId, null, log);
    assert.deepEqual(
      leaked.findings.map((f) => [f.where, f.name, f.match]),
      [['model input', 'socket error code', 'ECONNREFUSED']],
    );
  });
});
