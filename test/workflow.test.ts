import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { DecisionRejectedError, decideRefund, deliverEvent } from '../src/client/investigations';
import { DECISION_PREFIX, STUB } from '../src/context/wire';
import { emptyCaseNotes } from '../src/schemas/case-notes';
import { investigationId, type TicketEvent } from '../src/schemas/event';
import type { ModelRequest } from '../src/schemas/model';
import { SA } from '../src/schemas/search-attributes';
import { decideRefundSignal } from '../src/workflows/investigation-api';
import { SYSTEM_PROMPT } from '../src/workflows/prompt';
import { settingsWith, ticket } from './support/investigate';
import { allToolResults, answer, calls, json, lastToolResults, reply, scriptedModel, text, toolUse, type ScriptStep } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { seededWorker } from './support/temporal';

// The Investigation workflow on the real dev server and real Postgres, driven by a scripted
// model: each test says what the model replies, step by step, and checks what the workflow
// did with it — its status query, the requests it sent, the rows it wrote, its history.
// Every test has a ticket (so a workflow and a script) of its own; the refunds asked for are
// small parts of Dana's order 5102 (11,299 cents, 3,700 asked in all), so no test's refund can
// use up what another's may request, whatever order they run in.

const model = scriptedModel();
const ctx = seededWorker({ model });

/** A fresh ticket of Dana's whose workflow follows `script`. */
function scripted(message: string, script: ScriptStep[] | Parameters<typeof model.script>[1]): { event: TicketEvent; id: string } {
  const event = ticket('cust_dana', message);
  const id = investigationId(event.ticketId);
  model.script(id, script);
  return { event, id };
}

const run = (event: TicketEvent, env: Record<string, string> = {}) => deliver(ctx.tw, model, event, settingsWith(env));

async function refundRows(requestId: string): Promise<{ amount_cents: number }[]> {
  const { rows } = await ctx.db.admin.query('SELECT amount_cents FROM refunds WHERE request_id = $1', [requestId]);
  return rows;
}

async function requestStatus(requestId: string): Promise<string | undefined> {
  const { rows } = await ctx.db.admin.query('SELECT status FROM refund_requests WHERE request_id = $1', [requestId]);
  return rows[0]?.status;
}

async function searchAttributes(id: string) {
  const described = await ctx.tw.client.workflow.getHandle(id).describe();
  return { status: described.typedSearchAttributes.get(SA.status), step: described.typedSearchAttributes.get(SA.step) };
}

/**
 * The search attributes once they read `expected`, or what they read after 10 s. The status
 * query answers from the worker's state, which can be ahead of the workflow task completion
 * (with the upsert) the server has recorded, so a describe right after it may still read the last step's.
 */
async function searchAttributesReaching(id: string, expected: Awaited<ReturnType<typeof searchAttributes>>) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const read = await searchAttributes(id);
    if ((read.status === expected.status && read.step === expected.step) || Date.now() > deadline) return read;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The result the model was sent for `toolUseId`, from the request of the following step. */
function resultFor(request: ModelRequest, toolUseId: string) {
  const found = lastToolResults(request).find((r) => r.tool_use_id === toolUseId);
  assert.ok(found, `the next request answers ${toolUseId}`);
  return found;
}

/** The decision note the workflow sent the model in the last user message of `request`. */
function decisionNote(request: ModelRequest): {
  request_id: string;
  decision: string;
  decided_by: string;
  reason: string | null;
  refund: { refund_id: string; amount_cents: number } | null;
} {
  const last = request.messages[request.messages.length - 1];
  const blocks = typeof last?.content === 'string' ? [] : (last?.content ?? []);
  const note = blocks.flatMap((b) => (b.type === 'text' && b.text.startsWith(DECISION_PREFIX) ? [b.text.slice(DECISION_PREFIX.length)] : []))[0];
  assert.ok(note, 'the request carries the decision note');
  return JSON.parse(note);
}

const REVIEWING = 'A colleague is reviewing your refund; I will write again once it is decided.';

describe('a whole investigation', () => {
  test('files the request and answers the customer while a person decides; pays exactly one refund on approval, itself', async () => {
    const getOrder = toolUse('get_order', { order_id: '5102' });
    const askRefund = toolUse('request_refund', { order_id: '5102', amount_cents: 1500, reason: 'Marked delivered, never received.' });
    const { event, id } = scripted('My order 5102 never arrived.', [
      calls(getOrder),
      calls(askRefund),
      answer(REVIEWING),
      answer('Your refund of £15.00 for order 5102 has been issued.'),
    ]);

    const paused = await run(event);
    assert.equal(paused.status, 'awaiting_approval');
    assert.equal(paused.step, 3);
    assert.equal(paused.lastReply, REVIEWING, 'the customer is answered while the refund waits');
    const pending = paused.pendingApproval!;
    assert.deepEqual({ order: pending.order_id, amount: pending.amount_cents, use: pending.tool_use_id }, { order: '5102', amount: 1500, use: askRefund.id });
    const filed = JSON.parse(resultFor(model.requests(id, 'investigate')[2]!, askRefund.id).content);
    assert.deepEqual([filed.request_id, filed.status], [pending.request_id, 'awaiting_approval']);
    assert.equal(await requestStatus(pending.request_id), 'awaiting_approval');
    assert.deepEqual(await refundRows(pending.request_id), [], 'no refund before approval');
    assert.deepEqual(await searchAttributesReaching(id, { status: 'awaiting_approval', step: 3 }), { status: 'awaiting_approval', step: 3 });

    const approval = { requestId: pending.request_id, decision: 'approved' as const, approver: 'support-lead' };
    const first = await decideRefund(ctx.tw.client, id, approval);
    // A caller retrying the same decision (say, after a timeout) gets the same answer, not a refusal.
    assert.deepEqual(await decideRefund(ctx.tw.client, id, approval), first);
    const done = await settle(ctx.tw, model, id, paused.step);

    assert.equal(done.status, 'waiting_for_customer');
    assert.equal(done.lastReply, 'Your refund of £15.00 for order 5102 has been issued.');
    assert.deepEqual(
      done.decisions.map((d) => [d.requestId, d.decision, d.approver]),
      [[pending.request_id, 'approved', 'support-lead']],
    );
    assert.deepEqual(
      done.steps.map((s) => s.tools),
      [['get_order'], ['request_refund'], [], []],
      'the model did not have to call issue_refund',
    );
    const note = decisionNote(model.requests(id, 'investigate')[3]!);
    assert.deepEqual([note.request_id, note.decision, note.decided_by, note.refund?.amount_cents], [pending.request_id, 'approved', 'support-lead', 1500]);
    assert.deepEqual(
      done.refunds.map((r) => [r.request_id, r.amount_cents]),
      [[pending.request_id, 1500]],
    );
    assert.deepEqual(await refundRows(pending.request_id), [{ amount_cents: 1500 }], 'exactly one refund row for the approval');
    assert.equal(await requestStatus(pending.request_id), 'refunded');
    assert.deepEqual(await searchAttributesReaching(id, { status: 'waiting_for_customer', step: 4 }), { status: 'waiting_for_customer', step: 4 });

    // The run's totals are the sum of what each model call reported.
    const usages = model.replies(id).map((r) => r.usage);
    assert.equal(
      done.totals.input_tokens,
      usages.reduce((n, u) => n + u.input_tokens, 0),
    );
    assert.equal(
      done.totals.output_tokens,
      usages.reduce((n, u) => n + u.output_tokens, 0),
    );
    assert.equal(
      done.totals.cache_read_input_tokens,
      usages.reduce((n, u) => n + u.cache_read_input_tokens, 0),
    );
    assert.ok(done.totals.cost_usd > 0);
    assert.equal(done.model, 'scripted-model');
  });

  test('a denied refund is never issued, even when the model calls issue_refund anyway', async () => {
    const askRefund = toolUse('request_refund', { order_id: '5102', amount_cents: 900, reason: 'Charged twice.' });
    const issueAnyway = (request: ModelRequest) => calls(toolUse('issue_refund', { request_id: decisionNote(request).request_id }));
    const { event, id } = scripted('I was charged twice for order 5102.', [calls(askRefund), answer(REVIEWING), issueAnyway, answer('The refund was not approved.')]);
    const paused = await run(event);
    const pending = paused.pendingApproval!;
    await decideRefund(ctx.tw.client, id, { requestId: pending.request_id, decision: 'denied', approver: 'support-lead', reason: 'charge is a pre-authorisation' });
    const done = await settle(ctx.tw, model, id, paused.step);

    const sent = model.requests(id, 'investigate');
    const note = decisionNote(sent[2]!);
    assert.deepEqual([note.decision, note.reason, note.refund], ['denied', 'charge is a pre-authorisation', null]);
    const refused = lastToolResults(sent[3]!)[0];
    assert.equal(refused!.is_error, true, 'issue_refund on a denied request is an error result');
    assert.match(refused!.content, /denied/);
    assert.deepEqual(await refundRows(pending.request_id), []);
    assert.deepEqual(done.refunds, []);
    assert.equal(await requestStatus(pending.request_id), 'denied');
    assert.deepEqual(
      done.decisions.map((d) => d.decision),
      ['denied'],
    );
    assert.equal(done.status, 'waiting_for_customer');
  });

  test("a customer's message while the refund waits is answered at once, and nothing is paid until the decision", async () => {
    const askRefund = toolUse('request_refund', { order_id: '5102', amount_cents: 400, reason: 'Never received.' });
    const { event, id } = scripted('Order 5102 is missing.', [
      calls(askRefund),
      answer(REVIEWING),
      answer('It is with a colleague now; you will hear from us here.'),
      answer('Refund issued.'),
    ]);
    const paused = await run(event);
    const pending = paused.pendingApproval!;
    const meanwhile = await run({ ...event, type: 'ticket.message', eventId: `${event.eventId}-2`, message: 'Any news?' });
    assert.equal(meanwhile.lastReply, 'It is with a colleague now; you will hear from us here.');
    assert.equal(meanwhile.status, 'awaiting_approval');
    assert.deepEqual(await refundRows(pending.request_id), []);
    await decideRefund(ctx.tw.client, id, { requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await settle(ctx.tw, model, id, meanwhile.step);
    assert.equal(done.lastReply, 'Refund issued.');
    assert.equal((await refundRows(pending.request_id)).length, 1);
  });
});

describe('approvals', () => {
  const env = { CASEWORK_APPROVERS: 'support-lead:50000,junior:100' };

  test('the update validator refuses bad decisions with the reason, and they leave no update in history', async () => {
    const askRefund = toolUse('request_refund', { order_id: '5102', amount_cents: 700, reason: 'Never received.' });
    const { event, id } = scripted('Order 5102 never came.', [calls(askRefund), answer(REVIEWING), answer('Refund issued.')]);
    const paused = await run(event, env);
    const pending = paused.pendingApproval!;
    const refused = async (decision: Parameters<typeof decideRefund>[2], reason: RegExp) => {
      await assert.rejects(decideRefund(ctx.tw.client, id, decision), (error: Error) => {
        assert.ok(error instanceof DecisionRejectedError, error.message);
        assert.match(error.message, reason);
        return true;
      });
    };
    await refused({ requestId: 'req-nope', decision: 'approved', approver: 'support-lead' }, /unknown refund request req-nope/);
    await refused({ requestId: pending.request_id, decision: 'approved', approver: 'mallory' }, /mallory may not decide refunds/);
    await refused({ requestId: pending.request_id, decision: 'approved', approver: 'junior' }, /junior may approve up to 100 cents/);
    const history = await ctx.tw.client.workflow.getHandle(id).fetchHistory();
    const updates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes || e.workflowExecutionUpdateCompletedEventAttributes);
    assert.equal(updates.length, 0, 'rejected updates leave no trace in history');
    const still = await settle(ctx.tw, model, id);
    assert.deepEqual([still.status, still.decisions.length], ['awaiting_approval', 0]);

    await decideRefund(ctx.tw.client, id, { requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
    await settle(ctx.tw, model, id, paused.step);
    // A different decision on the same request (a retry of the same one gets its first answer, above).
    await refused({ requestId: pending.request_id, decision: 'denied', approver: 'support-lead' }, /already been decided/);
    assert.equal((await refundRows(pending.request_id)).length, 1);
  });

  test('a decision by signal is accepted; an invalid signal is ignored and decides nothing', async () => {
    const askRefund = toolUse('request_refund', { order_id: '5102', amount_cents: 600, reason: 'Never received.' });
    const { event, id } = scripted('Where is order 5102?', [calls(askRefund), answer(REVIEWING), answer('Refund issued.')]);
    const paused = await run(event, env);
    const pending = paused.pendingApproval!;
    const handle = ctx.tw.client.workflow.getHandle(id);
    // Signals are handled in order: the invalid one first, then the one from an allowed approver.
    await handle.signal(decideRefundSignal, { requestId: pending.request_id, decision: 'denied', approver: 'mallory' });
    await handle.signal(decideRefundSignal, { requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await settle(ctx.tw, model, id, paused.step);
    assert.deepEqual(
      done.decisions.map((d) => [d.decision, d.approver]),
      [['approved', 'support-lead']],
    );
    assert.deepEqual(
      done.steps.map((s) => s.tools),
      [['request_refund'], [], []],
    );
    assert.equal((await refundRows(pending.request_id)).length, 1);
  });
});

describe('tool failures and limits', () => {
  /** Runs one tool call then a final answer; returns the result the model was sent for the call. */
  async function oneCall(name: string, input: Record<string, unknown>) {
    const use = toolUse(name, input);
    const { event, id } = scripted('Please check my order.', [calls(use), answer('Done.')]);
    const done = await run(event);
    assert.equal(done.status, 'waiting_for_customer', 'the run goes on to the end of the turn');
    assert.equal(done.lastReply, 'Done.');
    return resultFor(model.requests(id, 'investigate')[1]!, use.id);
  }

  test('an unknown tool becomes an error result naming it, and the run goes on', async () => {
    const result = await oneCall('frobnicate', {});
    assert.equal(result.is_error, true);
    assert.match(result.content, /Unknown tool "frobnicate"/);
    assert.match(result.content, /get_order/, 'the error lists the tools there are');
  });

  test('a tool error (unknown order) becomes an error result the model reads', async () => {
    const result = await oneCall('get_order', { order_id: '99999' });
    assert.equal(result.is_error, true);
    assert.match(result.content, /99999/);
  });

  test('invalid tool input is refused by the schema, naming the field', async () => {
    const result = await oneCall('get_tracking_events', { order_id: '5102', page: 0 });
    assert.equal(result.is_error, true);
    assert.match(result.content, /^Invalid input for get_tracking_events: page/);
  });

  test("another customer's order is invisible to the tools", async () => {
    const result = await oneCall('get_order', { order_id: '4471' });
    assert.equal(result.is_error, true);
    assert.doesNotMatch(result.content, /Priya|Kingsmead|Block B/i, "nothing of the other customer's order leaks");
  });

  test('several tool_use blocks in one reply are all run and answered in order, results first', async () => {
    const uses = [
      toolUse('get_order', { order_id: '5102' }),
      toolUse('get_payments', { order_id: '5102' }),
      toolUse('lookup_policy', { topic: 'parcel marked delivered but not received' }),
    ];
    const { event, id } = scripted('Order 5102 never arrived.', [reply([text('Let me look at the order, payments and policy.'), ...uses]), answer('Found it.')]);
    const done = await run(event);
    assert.deepEqual(done.steps[0]!.tools, ['get_order', 'get_payments', 'lookup_policy']);
    const next = model.requests(id, 'investigate')[1];
    const results = lastToolResults(next!);
    assert.deepEqual(
      results.map((r) => r.tool_use_id),
      uses.map((u) => u.id),
    );
    assert.ok(
      results.every((r) => !r.is_error),
      JSON.stringify(results),
    );
    assert.match(results[0]!.content, /5102/);
  });

  test('the step cap hands the case to a person instead of looping on', async () => {
    const steps = Array.from({ length: 5 }, (_, i) => calls(toolUse('get_tracking_events', { order_id: '5102', page: (i % 2) + 1 })));
    const { event, id } = scripted('Order 5102?', steps);
    const done = await run(event, { CASEWORK_MAX_STEPS: '5' });
    assert.equal(done.step, 5);
    assert.equal(done.status, 'waiting_for_customer');
    assert.equal(model.requests(id, 'investigate').length, 5, 'no sixth model call');
    assert.match(done.lastReply!, /step limit/);
  });
});

describe('the conversation', () => {
  test('a follow-up continues the same investigation, sent after what came before, labelled as the customer', async () => {
    const { event, id } = scripted('Order 5102 never arrived.', [
      calls(toolUse('get_order', { order_id: '5102' })),
      answer('I am looking into it.'),
      answer('The refund takes 3-5 days.'),
    ]);
    const first = await run(event);
    const followUp = await run({ ...event, type: 'ticket.message', eventId: `${event.eventId}-2`, message: 'When will I see the money?' });
    assert.equal(followUp.workflowId, first.workflowId);
    assert.equal(followUp.step, first.step + 1);
    assert.equal(followUp.lastReply, 'The refund takes 3-5 days.');
    const [, second, third] = model.requests(id, 'investigate');
    const strip = (m: unknown) => JSON.stringify(m).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '');
    assert.deepEqual(third!.messages.slice(0, second!.messages.length).map(strip), second!.messages.map(strip), 'what was sent before is resent unchanged');
    const tail = third!.messages.slice(second!.messages.length);
    assert.deepEqual(
      tail.map((m) => m.role),
      ['assistant', 'user'],
    );
    assert.deepEqual(
      (tail[0]!.content as ContentBlockParam[]).map((b) => (b.type === 'text' ? b.text : b.type)),
      ['I am looking into it.'],
    );
    assert.deepEqual(
      (tail[1]!.content as ContentBlockParam[]).map((b) => (b.type === 'text' ? b.text : b.type)),
      ['Customer message:\nWhen will I see the money?'],
    );
  });

  test('the same event delivered twice is seen once', async () => {
    const { event, id } = scripted('Order 5102 never arrived.', [answer('Looking into it.'), answer('Still on it.')]);
    const first = await run(event);
    await deliverEvent(ctx.tw.client, ctx.tw.pool, event, { taskQueue: ctx.tw.taskQueue, settings: settingsWith() });
    const next = await run({ ...event, type: 'ticket.message', eventId: `${event.eventId}-2`, message: 'Any news?' });
    assert.equal(next.step, first.step + 1, 'only the new event made a step');
    const sent = model.requests(id, 'investigate');
    assert.equal(sent.length, 2);
    const texts = JSON.stringify(sent[1]!.messages);
    assert.equal(texts.split('Order 5102 never arrived.').length - 1, 1, 'the repeated message is in the conversation once');
  });

  test('closing the ticket summarises the conversation and records the case in memory', async () => {
    const notes = { ...emptyCaseNotes(), order_ids: ['5102'], customer_problem: 'Order 5102 marked delivered, never received.' };
    const { event, id } = scripted('Order 5102 never arrived.', { replies: [answer('I have passed this on.')], purposes: { compact: () => json(notes) } });
    await run(event);
    const closed = await run({ ...event, type: 'ticket.closed', eventId: `${event.eventId}-closed`, message: '' });
    assert.equal(closed.status, 'closed');
    const compaction = model.requests(id, 'compact');
    assert.equal(compaction.length, 1);
    assert.match(JSON.stringify(compaction[0]!.messages), /Order 5102 never arrived\./);
    const { rows } = await ctx.db.admin.query('SELECT ticket_id, order_ids, problem, resolution FROM memory_cases WHERE source_run = $1', [id]);
    assert.deepEqual(rows, [{ ticket_id: event.ticketId, order_ids: ['5102'], problem: notes.customer_problem, resolution: 'I have passed this on.' }]);
    assert.equal((await searchAttributes(id)).status, 'closed');
  });
});

describe('clearing and the rules', () => {
  test('clears in batches at steps 10 and 20, placeholders keep their tool_use ids, and the rules never move', async () => {
    const tools = [
      () => toolUse('get_order', { order_id: '5102' }),
      () => toolUse('get_tracking_events', { order_id: '5102', page: 1 }),
      () => toolUse('get_payments', { order_id: '5102' }),
      () => toolUse('lookup_policy', { topic: 'parcel marked delivered but not received' }),
      () => toolUse('get_earlier_tickets', { page: 1 }),
    ];
    const uses = Array.from({ length: 25 }, (_, i) => tools[i % tools.length]!());
    const notes = { ...emptyCaseNotes(), order_ids: ['5102'] };
    const { event, id } = scripted('Order 5102 never arrived.', { replies: [...uses.map((u) => calls(u)), answer('Done.')], purposes: { compact: () => json(notes) } });
    // Compaction is kept out of the way, so everything sent changes only by clearing.
    // The fixed interval, configured, keeps the schedule it names (the cache-optimal one is cache-schedule-workflow.test.ts).
    const done = await run(event, { CASEWORK_MAX_STEPS: '40', CASEWORK_COMPACT_ABOVE_TOKENS: '10000000', CASEWORK_CLEAR_EVERY: '10' });
    assert.equal(done.step, 26);
    const sent = model.requests(id, 'investigate');
    assert.equal(sent.length, 26);

    const rules = JSON.stringify(sent[0]!.system);
    assert.equal(sent[0]!.system[0]!.text, SYSTEM_PROMPT);
    for (const request of sent) assert.equal(JSON.stringify(request.system), rules, 'the system prompt is byte-identical on every call');

    const batches = done.steps.filter((s) => s.context_event?.startsWith('cleared')).map((s) => s.step);
    assert.deepEqual(batches, [10, 20], 'a clearing batch every ten steps');

    // Each result as first sent, word for word, by the id of the call it answers.
    const original = new Map<string, string>();
    for (const request of sent) for (const r of allToolResults(request)) if (!original.has(r.tool_use_id)) original.set(r.tool_use_id, r.content);
    assert.ok(![...original.values()].includes(STUB), 'a result is sent in full before it is ever cleared');

    const atTen = allToolResults(sent[9]!);
    assert.deepEqual(
      atTen.map((r) => r.tool_use_id),
      uses.slice(0, 9).map((u) => u.id),
      'placeholders keep the tool_use ids, in order',
    );
    assert.deepEqual(
      atTen.map((r) => r.content === STUB),
      [true, true, true, true, true, true, false, false, false],
      'all but the three newest are cleared',
    );
    assert.ok(!allToolResults(sent[8]!).some((r) => r.content === STUB), 'nothing is cleared before the first batch');
    const atTwenty = allToolResults(sent[19]!);
    assert.equal(atTwenty.filter((r) => r.content === STUB).length, 16);
    for (const r of atTwenty.filter((x) => x.content !== STUB)) assert.equal(r.content, original.get(r.tool_use_id), 'kept results are word for word');

    const strip = (m: unknown) => JSON.stringify(m).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '');
    for (let i = 1; i < sent.length; i++) {
      if (batches.includes(i + 1)) continue;
      const previous = sent[i - 1]!.messages.map(strip);
      assert.deepEqual(sent[i]!.messages.slice(0, previous.length).map(strip), previous, `step ${i + 1} resends step ${i}'s messages unchanged`);
    }

    // The workflow's own transcript kept every result: closing summarises it in full.
    await run({ ...event, type: 'ticket.closed', eventId: `${event.eventId}-closed`, message: '' });
    const summarised = JSON.stringify(model.requests(id, 'compact').map((r) => r.messages));
    for (const [toolUseId, content] of original) assert.ok(summarised.includes(JSON.stringify(content).slice(1, -1)), `the transcript still holds ${toolUseId} word for word`);
    assert.ok(!summarised.includes(STUB));
  });
});
