import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { recoverBrokenRun } from '../src/client/recovery';
import { textOfMessages } from '../src/context/transcript';
import { transcriptProblems } from '../src/context/transcript-check';
import type { Database } from '../src/db/pool';
import { TranscriptLog } from '../src/db/transcript-log';
import { investigationId } from '../src/schemas/event';
import { bodyCodecOf } from '../src/temporal/codec/body-codec';
import { connectClient, type TemporalClient } from '../src/temporal/client';
import { codecFor } from '../src/temporal/data-converter';
import { settingsWith, ticket } from './support/investigate';
import { allToolResults, answer, calls, scriptedModel, toolUse } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { openTestDatabase } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// A broken run whose state query cannot be answered (no worker can replay it) is rebuilt from
// its history. By reference (the default) that history holds the model steps' plans, not their
// messages: the conversation is read back from the transcript log, so the recovered run
// carries it whole, tool results word for word, and not only the state it began with.

describe('recovering a broken by-reference run from its history', () => {
  const model = scriptedModel();
  let db: Database;
  let tw: TestWorker;
  let temporal: TemporalClient;

  before(async () => {
    db = await openTestDatabase({ seed: true });
    tw = await startTestWorker({ pool: db.app, model });
  });
  after(async () => {
    await temporal?.close();
    await tw?.stop();
    await db?.close();
  });

  test('the last plan is read back from the log: the customer, the whole get_order result and the reply are carried', async () => {
    const event = ticket('cust_dana', 'My parcel for order 5102 never arrived at Block B.');
    const id = investigationId(event.ticketId);
    model.script(id, [calls(toolUse('get_order', { order_id: '5102' })), answer('I am checking with the courier.')]);
    const settled = await deliver(tw, model, event, settingsWith());
    assert.equal(settled.status, 'waiting_for_customer');
    const [result] = allToolResults(model.requests(id, 'investigate')[1]!);
    assert.ok(result && result.content.length > 100, 'the get_order result is longer than a skeleton preview');

    const handle = tw.client.workflow.getHandle(id);
    const { runId } = await handle.describe();
    await handle.terminate('a bug');
    // No worker: the closed run's state query times out, and recovery reads the history.
    await tw.stop();
    temporal = await connectClient(tw.config, { pool: db.app });
    const log = new TranscriptLog(db.app, bodyCodecOf(codecFor(tw.config)));

    const recovery = await recoverBrokenRun(temporal.client, id, runId, 'TERMINATED', { log });
    assert.equal(recovery.recovered.transcript, 'from_history');
    const carried = recovery.carried.transcript;
    const said = textOfMessages(carried);
    assert.ok(said.includes('My parcel for order 5102 never arrived at Block B.'), "the customer's message");
    assert.ok(said.includes('I am checking with the courier.'), 'the reply to the last step');
    const carriedResults = carried.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
    assert.equal(carriedResults.length, 1);
    const content = carriedResults[0]!.content;
    assert.equal(typeof content === 'string' ? content : JSON.stringify(content), result.content, 'the tool result word for word, not its preview');
    assert.deepEqual(transcriptProblems(carried), [], 'a valid request');

    // Without the log the same history gives only the state the run began with.
    const blind = await recoverBrokenRun(temporal.client, id, runId, 'TERMINATED');
    assert.ok(!textOfMessages(blind.carried.transcript).includes('I am checking with the courier.'));
  });
});
