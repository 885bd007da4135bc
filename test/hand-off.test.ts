import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { replyAsPerson, resumeInvestigation } from '../src/client/hand-off';
import { CUT_OFF_TOOL_USE, EMPTY_REPLY_NUDGE } from '../src/context/replies';
import { transcriptProblems } from '../src/context/transcript-check';
import { investigationId, type TicketEvent } from '../src/schemas/event';
import type { ModelRequest } from '../src/schemas/model';
import { SA } from '../src/schemas/search-attributes';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { ticket } from './support/investigate';
import { answer, lastToolResults, reply, scriptedModel, text, thinking, toolUse, type ScriptStep } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { seededWorker } from './support/temporal';

// The replies the Messages API documents beyond end_turn and tool_use, and what happens when
// something cannot be retried: the case goes to a person (needs_human), the customer is told,
// the transcript is kept, and a person resumes or answers it in the same run.

const model = scriptedModel();
const ctx = seededWorker({ model });

function scripted(message: string, script: ScriptStep[]): { event: TicketEvent; id: string } {
  const event = ticket('cust_dana', message);
  const id = investigationId(event.ticketId);
  model.script(id, script);
  return { event, id };
}

const run = (event: TicketEvent) => deliver(ctx.tw, model, event);
const lastUserTexts = (request: ModelRequest) => {
  const last = request.messages[request.messages.length - 1];
  return typeof last?.content === 'string' ? [last.content] : (last?.content ?? []).flatMap((b) => (b.type === 'text' ? [b.text] : []));
};
/** A model error the API documents as final: a 400 the same request can never pass. */
const rejected = (): never => {
  throw ApplicationFailure.create({ type: 'ModelRequestRejected', nonRetryable: true, message: 'invalid_request_error: prompt is too long' });
};

describe('documented replies keep the conversation valid', () => {
  test('an empty reply stores nothing and the step is asked again, and the next request is valid', async () => {
    const { event, id } = scripted('Hello?', [reply([], { stop_reason: 'end_turn' }), answer('Hello, how can I help?')]);
    const done = await run(event);
    assert.equal(done.lastReply, 'Hello, how can I help?');
    const sent = model.requests(id, 'investigate');
    assert.equal(sent.length, 2);
    assert.ok(lastUserTexts(sent[1]!).includes(EMPTY_REPLY_NUDGE));
    assert.deepEqual(transcriptProblems(sent[1]!.messages), []);
  });

  test('a tool call cut off by max_tokens is never run; it is answered with an error saying why', async () => {
    const cut = toolUse('write_notes', { found: ['the courier scanned it at'] });
    const { event, id } = scripted('Order 5102 again.', [reply([cut], { stop_reason: 'max_tokens' }), answer('Noted.')]);
    const done = await run(event);
    assert.equal(done.lastReply, 'Noted.');
    assert.deepEqual(done.agentNotes, { found: [], ruled_out: [], to_do: [] }, 'the cut-off write_notes did not run');
    const result = lastToolResults(model.requests(id, 'investigate')[1]!)[0];
    assert.deepEqual([result!.tool_use_id, result!.content, result!.is_error], [cut.id, CUT_OFF_TOOL_USE, true]);
  });

  test('pause_turn is sent back as it is and the model carries on; thinking blocks go back exactly as returned', async () => {
    const thought = thinking('the customer wants a status');
    const { event, id } = scripted('Status of 5102?', [reply([thought, text('Checking')], { stop_reason: 'pause_turn' }), answer('It is on its way.')]);
    const done = await run(event);
    assert.equal(done.lastReply, 'It is on its way.');
    const second = model.requests(id, 'investigate')[1];
    const last = second!.messages[second!.messages.length - 1];
    assert.equal(last!.role, 'assistant', 'the paused reply is continued from where it stopped');
    assert.deepEqual((last!.content as unknown[])[0], { type: 'thinking', thinking: 'the customer wants a status', signature: (thought as { signature: string }).signature });
  });
});

describe('what cannot be retried goes to a person', () => {
  test('a rejected model call hands the case to a person, tells the customer, and a person resumes it in the same run', async () => {
    const { event, id } = scripted('Where is my parcel?', [rejected, answer('Here is what I found.')]);
    const held = await run(event);
    assert.equal(held.status, 'needs_human');
    assert.equal(held.lastReply, HOLDING_REPLY);
    assert.match(held.handOff!.reason, /the model could not be asked: .*prompt is too long/);
    const described = await ctx.tw.client.workflow.getHandle(id).describe();
    assert.equal(described.status.name, 'RUNNING', 'the workflow did not fail');
    assert.equal(described.typedSearchAttributes.get(SA.status), 'needs_human');

    await resumeInvestigation(ctx.tw.client, id, { by: 'support-lead', note: 'try again' });
    const done = await settle(ctx.tw, model, id, held.step);
    assert.equal(done.status, 'waiting_for_customer');
    assert.equal(done.lastReply, 'Here is what I found.');
    assert.equal(done.handOff, null);
    const resumed = model.requests(id, 'investigate').at(-1)!;
    assert.deepEqual(transcriptProblems(resumed.messages), []);
    assert.ok(lastUserTexts(resumed).some((t) => /support-lead, a colleague, asked you to carry on/.test(t)));
  });

  test("a person's own reply answers the customer and the case waits for them again", async () => {
    const { event, id } = scripted('Refund please.', [rejected]);
    const held = await run(event);
    assert.equal(held.status, 'needs_human');
    await replyAsPerson(ctx.tw.client, id, { by: 'sam', text: 'I have refunded you myself. Sam' });
    const done = await settle(ctx.tw, model, id);
    assert.deepEqual([done.status, done.lastReply], ['waiting_for_customer', 'I have refunded you myself. Sam']);
  });

  test('a refusal by the model goes to a person too, and resume or reply on a case that is fine is refused', async () => {
    const { event } = scripted('Do something odd.', [reply([], { stop_reason: 'refusal' })]);
    const held = await run(event);
    assert.equal(held.status, 'needs_human');
    assert.match(held.handOff!.reason, /declined/);

    const fine = scripted('Hi', [answer('Hello.')]);
    await run(fine.event);
    await assert.rejects(resumeInvestigation(ctx.tw.client, fine.id, { by: 'sam' }), /not waiting for a person/);
  });
});
