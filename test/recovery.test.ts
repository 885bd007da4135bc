import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { readCaseStatus } from '../src/client/case-status';
import { deliverEvent } from '../src/client/investigations';
import { stateFromHistory } from '../src/client/recovery';
import { messagesOfEntries } from '../src/context/log-messages';
import { TranscriptLog } from '../src/db/transcript-log';
import { readCase } from '../src/server/console/cases';
import { bodyCodecOf } from '../src/temporal/codec/body-codec';
import { codecFor } from '../src/temporal/data-converter';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { textOfMessages } from '../src/context/transcript';
import { transcriptProblems } from '../src/context/transcript-check';
import { investigationId, type TicketEvent } from '../src/schemas/event';
import type { InvestigationStatus } from '../src/schemas/investigation';
import type { ModelRequest } from '../src/schemas/model';
import { startServer, type RunningServer } from '../src/server/start';
import { investigation } from '../src/workflows/investigation';
import { freshState } from '../src/workflows/state';
import { unique } from './support/db';
import { settingsWith, ticket } from './support/investigate';
import { answer, json, scriptedModel } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { seededWorker } from './support/temporal';

// A run that FAILED, was TERMINATED or TIMED_OUT is a bug casework reports as such; the
// ticket's next event starts a run that carries the old transcript and says it was recovered,
// and the customer is answered. A run that ended well is reopened fresh, as before.

const model = scriptedModel();
const ctx = seededWorker({ model });
const TRUSTED = 'tk_trusted_0123456789abcdef';
let server: RunningServer | undefined;

/** The HTTP server on the file's worker, started by the first test that calls it. */
async function serve(): Promise<RunningServer> {
  const config = { ...ctx.tw.config, CASEWORK_API_KEYS: `${TRUSTED}:*` };
  server ??= await startServer({ client: ctx.tw.client, pool: ctx.tw.pool, config, log: () => undefined }, 0);
  return server;
}
after(async () => {
  await server?.close();
});

const http = async (method: string, path: string, body?: unknown) => {
  const res = await fetch((await serve()).url + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TRUSTED}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

const lastRequest = (id: string): ModelRequest => {
  const sent = model.requests(id, 'investigate');
  const last = sent[sent.length - 1];
  assert.ok(last, `${id} sent the model nothing`);
  return last;
};
const followUp = (first: TicketEvent, message: string): TicketEvent => ticket(first.customerId, message, { ticketId: first.ticketId, type: 'ticket.message' });

async function runOf(id: string): Promise<{ runId: string; status: string }> {
  const described = await ctx.tw.client.workflow.getHandle(id).describe();
  return { runId: described.runId, status: described.status.name };
}

/** Waits until the ticket's latest run has `status`, polling Temporal (at most `polls` times, 100 ms apart). */
async function untilRunStatus(id: string, status: string, polls: number): Promise<void> {
  for (let i = 0; (await runOf(id)).status !== status; i++) {
    assert.ok(i < polls, `the run became ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A ticket from cust_dana answered once by the scripted model (then `reply` for the recovered run), and its first run. */
async function answeredCase(message: string, firstReply: string, reply: string) {
  const first = ticket('cust_dana', message);
  const id = investigationId(first.ticketId);
  model.script(id, [answer(firstReply), answer(reply)]);
  await deliver(ctx.tw, model, first);
  return { first, id, broken: await runOf(id) };
}

/** Checks the run that answered `status` is a recovery of `brokenRunId` that carries `firstMessage` and answered. */
function assertRecovered(status: InvestigationStatus, id: string, brokenRunId: string, runStatus: string, firstMessage: string, reply: string): void {
  assert.equal(status.recoveredFrom?.runId, brokenRunId);
  assert.equal(status.recoveredFrom?.runStatus, runStatus);
  assert.equal(status.recoveredFrom?.transcript, 'carried');
  assert.deepEqual([status.status, status.lastReply], ['waiting_for_customer', reply], 'the customer is answered');
  assert.match(status.steps[status.steps.length - 1]?.context_event ?? '', new RegExp(`recovered from ${runStatus} run ${brokenRunId}`));
  const request = lastRequest(id);
  const said = textOfMessages(request.messages);
  assert.ok(said.includes(firstMessage), 'the recovered run carries the customer\u2019s first message');
  assert.match(said, new RegExp(`stopped unexpectedly \\(its run was ${runStatus}\\)`), 'the model is told the conversation was recovered');
  assert.deepEqual(transcriptProblems(request.messages), [], 'the carried transcript is a valid request');
}

describe('a broken run is recovered by the next event', () => {
  test('a TERMINATED run is reported as such, and the next message starts a run carrying its transcript that says it was recovered', async () => {
    const { first, id, broken } = await answeredCase(
      'My parcel for order 5102 never arrived.',
      'I am checking with the courier.',
      'Sorry for the delay on our side: the courier confirms it is on its way.',
    );
    await ctx.tw.client.workflow.getHandle(id).terminate('a bug');

    const reported = await readCaseStatus(ctx.tw.client, id);
    assert.equal(reported.brokenRun, 'TERMINATED');
    assert.equal(reported.lastReply, 'I am checking with the courier.', 'the broken run still shows what it had said');

    const recovered = await deliver(ctx.tw, model, followUp(first, 'Any news?'));
    const now = await runOf(id);
    assert.notEqual(now.runId, broken.runId);
    assert.equal(now.status, 'RUNNING');
    assertRecovered(
      recovered,
      id,
      broken.runId,
      'TERMINATED',
      'My parcel for order 5102 never arrived.',
      'Sorry for the delay on our side: the courier confirms it is on its way.',
    );
    assert.ok(textOfMessages(lastRequest(id).messages).includes('I am checking with the courier.'), 'and its own earlier reply');
    assert.equal((await readCaseStatus(ctx.tw.client, id)).brokenRun, undefined);
  });

  test('a TIMED_OUT run is recovered the same way, and the gate still refuses another customer', async () => {
    const first = ticket('cust_dana', 'I was charged twice for order 5107.');
    const id = investigationId(first.ticketId);
    const reply = answer('I am looking at both charges.');
    model.script(id, [reply, reply]);
    // Started as deliverEvent starts it, with a run timeout: the run times out for real.
    await ctx.tw.client.workflow.signalWithStart(investigation, {
      workflowId: id,
      taskQueue: ctx.tw.taskQueue,
      workflowRunTimeout: '6s',
      args: [{ ticketId: first.ticketId, customerId: first.customerId, settings: settingsWith() }],
      signal: 'customerMessage',
      signalArgs: [{ eventId: first.eventId, customerId: first.customerId, message: first.message, receivedAt: first.receivedAt }],
    });
    const brokenRunId = (await runOf(id)).runId;
    await untilRunStatus(id, 'TIMED_OUT', 600);
    const recovered = await deliver(ctx.tw, model, followUp(first, 'Hello?'));
    assertRecovered(recovered, id, brokenRunId, 'TIMED_OUT', 'I was charged twice for order 5107.', 'I am looking at both charges.');

    const intruder = await http('POST', '/events', { ...followUp(first, 'mine now'), customerId: 'cust_other' });
    assert.equal(intruder.status, 409);
  });

  test('a CANCELLED run is reported and recovered too', async () => {
    const { first, id, broken } = await answeredCase('Please cancel nothing: where is order 5102?', 'Checking now.', 'Sorry for the delay: it arrives tomorrow.');
    await ctx.tw.client.workflow.getHandle(id).cancel();
    await untilRunStatus(id, 'CANCELLED', 300);
    assert.equal((await readCaseStatus(ctx.tw.client, id)).brokenRun, 'CANCELLED');
    const recovered = await deliver(ctx.tw, model, followUp(first, 'Hello again.'));
    assertRecovered(recovered, id, broken.runId, 'CANCELLED', 'Please cancel nothing: where is order 5102?', 'Sorry for the delay: it arrives tomorrow.');
  });

  test('over HTTP: the status route reports the broken run, and the next event recovers it', async () => {
    const first = ticket('cust_dana', 'The courier says the address was wrong, it was not.');
    const id = investigationId(first.ticketId);
    model.script(id, [answer('I will check the address on the order.'), answer('Apologies for the wait: the address on the order is right.')]);
    assert.equal((await http('POST', '/events', first)).status, 202);
    await settle(ctx.tw, model, id);
    const brokenRunId = (await runOf(id)).runId;
    await ctx.tw.client.workflow.getHandle(id).terminate('a bug');

    const shown = await http('GET', `/investigations/${id}`);
    assert.deepEqual([shown.status, shown.body.brokenRun], [200, 'TERMINATED']);

    assert.equal((await http('POST', '/events', followUp(first, 'Well?'))).status, 202);
    const recovered = await settle(ctx.tw, model, id, 1);
    assertRecovered(recovered, id, brokenRunId, 'TERMINATED', 'The courier says the address was wrong, it was not.', 'Apologies for the wait: the address on the order is right.');
    const after = await http('GET', `/investigations/${id}`);
    assert.deepEqual([after.body.brokenRun, after.body.recoveredFrom?.runId], [undefined, brokenRunId]);
  });

  test('a run that ended well is not recovered: the next event reopens the ticket with a fresh run', async () => {
    const first = ticket('cust_dana', 'Where is order 5102? Reference zq-closed-run.');
    const id = investigationId(first.ticketId);
    const notes = { ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: 'Asked where order 5102 is.' };
    model.script(id, { replies: [answer('It is on its way.'), answer('Welcome back, how can I help?')], purposes: { compact: () => json(notes) } });
    await deliver(ctx.tw, model, first);
    await deliver(ctx.tw, model, { ...first, eventId: unique('evt'), type: 'ticket.closed', message: '' });
    const closedRunId = (await runOf(id)).runId;
    await deliverEvent(ctx.tw.client, ctx.tw.pool, followUp(first, 'One more question.'), { taskQueue: ctx.tw.taskQueue, settings: settingsWith() });
    assert.notEqual((await runOf(id)).runId, closedRunId, 'a new run');
    // A fresh run counts its steps from zero again.
    const reopened = await settle(ctx.tw, model, id, 0);
    assert.equal(reopened.recoveredFrom, null);
    assert.equal(reopened.lastReply, 'Welcome back, how can I help?');
    assert.ok(!textOfMessages(lastRequest(id).messages).includes('zq-closed-run'), 'the fresh run does not carry the closed conversation');
    // Kept by reference, the closed run's entries stay in the log under the same workflow id; the console reads only the new run's.
    const log = new TranscriptLog(ctx.tw.pool, bodyCodecOf(codecFor(ctx.tw.config)));
    assert.ok(textOfMessages(messagesOfEntries(await log.all(id, ['message']))).includes('zq-closed-run'), 'the closed run wrote its entries to the log');
    const shown = await readCase({ client: ctx.tw.client, log }, id);
    assert.ok(shown.transcript, 'the console reads the reopened run');
    assert.match(textOfMessages(shown.transcript), /One more question/);
    assert.ok(!textOfMessages(shown.transcript).includes('zq-closed-run'), 'the console does not show the closed conversation as part of this one');
  });
});

describe('rebuilding a broken run from its history', () => {
  const request: MessageParam[] = [
    { role: 'user', content: [{ type: 'text', text: 'Parcel 5102 is missing.', cache_control: { type: 'ephemeral' } }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks.' }] },
  ];
  const message = (eventId: string, text: string) => ({ eventId, customerId: 'cust_dana', message: text, receivedAt: '2026-01-01T00:00:00.000Z' });

  test('carries the last model request and its reply, without cache marks; messages it did not hold wait in the inbox', () => {
    const state = stateFromHistory({
      lastRequest: request,
      lastReply: [{ type: 'text', text: 'Found it.' }],
      received: [message('e1', 'Parcel 5102 is missing.'), message('e2', 'Thanks.'), message('e3', 'Also, order 5107?')],
    });
    assert.ok(state);
    assert.equal(state.transcript.length, 4);
    assert.deepEqual(state.transcript[0], { role: 'user', content: [{ type: 'text', text: 'Parcel 5102 is missing.' }] });
    assert.deepEqual(state.transcript[3], { role: 'assistant', content: [{ type: 'text', text: 'Found it.' }] });
    assert.deepEqual(
      state.inbox.map((m) => m.eventId),
      ['e3'],
    );
    assert.deepEqual(state.seenEventIds, ['e1', 'e2', 'e3']);
  });

  test('a run that carried a state in keeps it when it never called the model; nothing at all is unavailable', () => {
    const carried = { ...freshState(), transcript: request, seenEventIds: ['e1', 'e2'] };
    const state = stateFromHistory({ input: { ticketId: 'T', customerId: 'cust_dana', settings: settingsWith(), carried }, received: [message('e2', 'Thanks.')] });
    assert.deepEqual([state?.transcript, state?.inbox], [request, []]);
    assert.equal(stateFromHistory({ input: { ticketId: 'T', customerId: 'cust_dana', settings: settingsWith() }, received: [] }), null);
  });
});
