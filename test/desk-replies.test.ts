import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { decideRefund, deliverEvent, readStatus } from '../src/client/investigations';
import { PREVIEW_CHARS } from '../src/context/references';
import { toolEvidence } from '../src/context/tool-evidence';
import { verifyCaseworkWebhook } from '../src/desk/webhook-client';
import { startMetricsEndpoint } from '../src/observability/endpoint';
import { investigationId } from '../src/schemas/event';
import { humanReplyUpdate } from '../src/workflows/investigation-api';
import { HOLDING_REPLY } from '../src/workflows/hand-off';
import { CUSTOMER, deskStack, openZendeskCase, postsSettled } from './support/desk-stack';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, reply, toolUse } from './support/scripted-model';
import { settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// Replies and internal notes going back to the desk exactly once: the real worker posts through
// the postToDesk activity to the Zendesk stand-in (a test double of Zendesk's API), which injects
// the faults a desk really gives (a write applied and then never answered, 429, 401).

const stack = deskStack();

const agentComments = (ticketId: number) => stack.standin.ticket(ticketId)!.comments.filter((c) => c.author_id === stack.standin.agent.id);
const publicReplies = (ticketId: number) => agentComments(ticketId).filter((c) => c.public);
const notes = (ticketId: number) => agentComments(ticketId).filter((c) => !c.public);

describe('replies and notes to Zendesk, exactly once', () => {
  it('a reply whose post was applied but never answered is not posted twice', async () => {
    stack.standin.inject({ kind: 'apply_then_timeout', count: 1, hangMs: 5_000 });
    const { ticketId, workflowId } = await openZendeskCase(stack, 'My parcel never came.', [answer('I am sorry: I have found it and it will arrive tomorrow.')]);
    const status = await postsSettled(stack, workflowId, 1);
    assert.equal(status.desk!.posted, 1);
    assert.deepEqual(
      publicReplies(ticketId).map((c) => c.body),
      ['I am sorry: I have found it and it will arrive tomorrow.'],
    );
    assert.ok(stack.standin.requests.some((r) => r.status === 'dropped'));
  });

  it('waits out a 429 with Retry-After, then posts once', async () => {
    stack.standin.inject({ kind: 'rate_limit', count: 1, retryAfterSeconds: 1 });
    const before = stack.standin.requests.filter((r) => r.status === 429).length;
    const { ticketId, workflowId } = await openZendeskCase(stack, 'Is my order on its way?', [answer('Yes, it left the warehouse this morning.')]);
    await postsSettled(stack, workflowId, 1);
    assert.equal(stack.standin.requests.filter((r) => r.status === 429).length, before + 1);
    assert.deepEqual(
      publicReplies(ticketId).map((c) => c.body),
      ['Yes, it left the warehouse this morning.'],
    );
  });

  it('a 401 puts the case in needs_human, keeps the reply, and posts it once a person answers', async () => {
    stack.standin.inject({ kind: 'unauthorized', count: 1 });
    const { ticketId, workflowId } = await openZendeskCase(stack, 'Hello?', [answer('Hello! Let me check that for you.')]);
    const status = await postsSettled(stack, workflowId, 1);
    assert.equal(status.status, 'needs_human');
    assert.match(status.handOff!.reason, /could not post reply 1 to the desk ticket: zendesk refused casework's credentials .*HTTP 401.*CASEWORK_ZENDESK_API_TOKEN/);
    assert.doesNotMatch(status.handOff!.reason, new RegExp(stack.standin.agent.apiToken));
    assert.deepEqual(
      status.desk!.failed.map((f) => f.body),
      ['Hello! Let me check that for you.'],
    );
    assert.equal(agentComments(ticketId).length, 0);

    // The credentials fixed, a person answers: the held reply goes out first, then theirs, each once.
    await stack.tw.client.workflow.getHandle(workflowId).executeUpdate(humanReplyUpdate, { args: [{ by: 'sam', text: 'Sam here: your parcel is with the neighbour.' }] });
    await postsSettled(stack, workflowId, 2);
    assert.deepEqual(
      publicReplies(ticketId).map((c) => c.body),
      ['Hello! Let me check that for you.', 'Sam here: your parcel is with the neighbour.'],
    );
  });

  it('a case that needs a person tells the customer on the ticket and leaves the team an internal note saying why', async () => {
    const { ticketId, workflowId, status } = await openZendeskCase(stack, 'Refund me now!', [reply([], { stop_reason: 'refusal' })]);
    assert.equal(status.status, 'needs_human');
    await postsSettled(stack, workflowId, 2);
    assert.deepEqual(
      publicReplies(ticketId).map((c) => c.body),
      [HOLDING_REPLY],
    );
    const [note] = notes(ticketId);
    assert.match(note!.body, /needs a person\. the model declined to answer/);
    assert.ok(stack.standin.ticket(ticketId)!.tags.includes('casework_needs_human'));
    // Handed to a person inside the team: On-hold, not Pending (which would mean waiting on the customer).
    assert.equal(stack.standin.ticket(ticketId)!.status, 'hold');
  });

  it('a refund awaiting approval leaves a note with amount, order, evidence and how to approve; the issued refund another', async () => {
    const { ticketId, workflowId, status } = await openZendeskCase(stack, 'Order 5102 never arrived, I want my money back.', [
      calls(toolUse('get_order', { order_id: '5102' })),
      calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Marked delivered but never received.' })),
      answer('I have asked a colleague to approve a refund of 10.00 for order 5102.'),
      answer('Your refund has been issued.'),
    ]);
    assert.equal(status.status, 'awaiting_approval');
    await postsSettled(stack, workflowId, 2);
    const waiting = notes(ticketId)[0]!.body;
    for (const part of [
      // The demo shop's orders are in pounds: the note says so, in the order's own currency.
      'refund of £10.00 for order 5102',
      'Marked delivered but never received.',
      '- Order 5102: ',
      `casework approve ${workflowId} --request ${status.pendingApproval!.request_id} --approver`,
    ]) {
      assert.ok(waiting.includes(part), `${part} in ${waiting}`);
    }
    const evidence = waiting.split('\n').filter((line) => line.startsWith('- '));
    assert.ok(evidence.length > 0 && evidence.every((line) => !/[{}"]/.test(line)), `evidence a person can read:\n${evidence.join('\n')}`);
    assert.equal(stack.standin.ticket(ticketId)!.status, 'hold');

    await decideRefund(stack.tw.client, workflowId, { requestId: status.pendingApproval!.request_id, decision: 'approved', approver: 'support-lead' });
    await settle(stack.tw, stack.model, workflowId, status.step);
    await postsSettled(stack, workflowId, 4);
    assert.match(notes(ticketId)[1]!.body, /refund .* of £10\.00 for order 5102 was issued, approved by support-lead/);
    assert.deepEqual(
      publicReplies(ticketId).map((c) => c.body),
      ['I have asked a colleague to approve a refund of 10.00 for order 5102.', 'Your refund has been issued.'],
    );
  });

  it('a denied refund leaves the team a note saying who denied it and why, and opens the ticket again', async () => {
    const { ticketId, workflowId, status } = await openZendeskCase(stack, 'Refund order 5102, it never came.', [
      calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Customer says it never arrived.' })),
      answer('I have asked a colleague to look at a refund for order 5102.'),
      answer('I am sorry: the refund was not approved, because the courier has a signature.'),
    ]);
    assert.equal(status.status, 'awaiting_approval');
    await postsSettled(stack, workflowId, 2);
    assert.equal(stack.standin.ticket(ticketId)!.status, 'hold');

    await decideRefund(stack.tw.client, workflowId, {
      requestId: status.pendingApproval!.request_id,
      decision: 'denied',
      approver: 'support-lead',
      reason: 'signed for by the customer',
    });
    await settle(stack.tw, stack.model, workflowId, status.step);
    await postsSettled(stack, workflowId, 4);
    assert.deepEqual(
      notes(ticketId).map((n) => n.body.split('\n')[0]),
      [
        'casework: refund of £10.00 for order 5102 awaits approval.',
        `casework: refund ${status.pendingApproval!.request_id} of £10.00 for order 5102 was denied by support-lead: signed for by the customer. Nothing was paid; casework tells the customer.`,
      ],
    );
    assert.ok(stack.standin.ticket(ticketId)!.tags.includes('casework_refund_denied'));
    // The wait for approval is over (open), and casework's reply then waits on the customer (pending).
    assert.deepEqual(stack.standin.statusHistory(ticketId), ['new', 'hold', 'open', 'pending']);
    assert.equal(publicReplies(ticketId).length, 2);
  });

  it('a ticket from POST /events posts nothing when the worker has no generic webhook, whatever the starter was configured with', async () => {
    const event = ticket(CUSTOMER, 'Where is order 5102?');
    stack.model.script(investigationId(event.ticketId), [answer('It is on its way.')]);
    // The starter lists the webhook; the worker, which posts, does not: the worker decides.
    await deliverEvent(stack.tw.client, stack.tw.pool, event, { taskQueue: stack.tw.taskQueue, settings: settingsWith({ CASEWORK_DESKS: 'webhook' }) });
    let status = await settle(stack.tw, stack.model, investigationId(event.ticketId));
    // The first post finds out there is no desk, and the outbox goes with it.
    for (const deadline = Date.now() + 30_000; status.desk && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100)))
      status = await readStatus(stack.tw.client, investigationId(event.ticketId));
    assert.equal(status.desk, undefined);
    const history = await stack.tw.client.workflow.getHandle(investigationId(event.ticketId)).fetchHistory();
    const posts = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'postToDesk');
    assert.equal(posts.length, 1, 'one post finds out there is no desk; none follows');
  });

  it('shows posts by desk on the worker\u2019s operator endpoint (CASEWORK_METRICS_PORT), where the postToDesk activity runs', async () => {
    // `casework worker` serves this endpoint itself; in a deployment the HTTP server is another process and shows only webhooks.
    const endpoint = await startMetricsEndpoint({
      config: { CASEWORK_METRICS_PORT: 0, CASEWORK_METRICS_HOST: '127.0.0.1', CASEWORK_METRICS_VISIBILITY_SECONDS: 15, TEMPORAL_TASK_QUEUE: stack.tw.taskQueue },
    });
    try {
      const text = await (await fetch(`${endpoint.url}/metrics`)).text();
      assert.match(text, /casework_desk_posts_total\{desk="zendesk",kind="reply",outcome="(posted|already_posted)"\} [1-9]/);
      assert.match(text, /casework_desk_posts_total\{desk="zendesk",kind="note",outcome="(posted|already_posted)"\} [1-9]/);
      assert.match(text, /casework_desk_post_failures_total\{desk="zendesk",kind="reply",error="DeskAuthError"\} 1/);
      assert.match(text, /casework_desk_post_failures_total\{desk="zendesk",kind="reply",error="DeskRateLimitedError"\} 1/);
      // The 429 asked for a second: waited out inside the post, and counted.
      assert.match(text, /casework_desk_rate_limited_total\{desk="zendesk",handling="waited"\} 1/);
      assert.match(text, /casework_desk_rate_limit_seconds_total\{desk="zendesk"\} 1/);
    } finally {
      await endpoint.close();
    }
  });
});

describe('the generic outbound webhook', () => {
  const SECRET = 'generic-webhook-secret-0123456789';
  const received: { id: string; type: string; body: string; sequence: number; verified: boolean }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const header = (name: string) => (typeof req.headers[name] === 'string' ? req.headers[name] : undefined);
      const verified = verifyCaseworkWebhook({
        secret: SECRET,
        timestamp: header('x-casework-timestamp'),
        signature: header('x-casework-signature'),
        body: raw,
        now: new Date(),
        windowSeconds: 300,
      });
      const payload = JSON.parse(raw.toString('utf8')) as { id: string; type: string; body: string; sequence: number };
      // A receiver stores ids: a repeated one is done already.
      if (!received.some((r) => r.id === payload.id)) received.push({ ...payload, verified });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  let tw: TestWorker;
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/casework`;
    tw = await startTestWorker({
      pool: stack.db.app,
      model: stack.model,
      env: { CASEWORK_DESKS: 'webhook', CASEWORK_DESK_WEBHOOK_URL: url, CASEWORK_DESK_WEBHOOK_SECRET: SECRET },
    });
  });
  after(async () => {
    await tw?.stop();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('POSTs each reply of a POST /events ticket as signed JSON the receiver verifies, configured on the worker alone', async () => {
    const event = ticket(CUSTOMER, 'Any news on 5102?');
    const workflowId = investigationId(event.ticketId);
    stack.model.script(workflowId, [answer('It arrives tomorrow.')]);
    // The starter (a server, the CLI) lists no desk: the worker's webhook, configured once, is what counts.
    await deliverEvent(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings: settingsWith({ CASEWORK_DESKS: '' }) });
    await settle(tw, stack.model, workflowId);
    const deadline = Date.now() + 30_000;
    while (!received.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(received.length, 1);
    assert.deepEqual([received[0]!.type, received[0]!.body, received[0]!.sequence, received[0]!.verified], ['casework.reply', 'It arrives tomorrow.', 1, true]);
  });

  it('the refund note\u2019s evidence comes from the whole tool results in the transcript log, not the skeleton\u2019s previews', async () => {
    const event = ticket(CUSTOMER, 'Order 5102 never arrived, I want my money back.');
    const workflowId = investigationId(event.ticketId);
    stack.model.script(workflowId, [
      calls(toolUse('get_order', { order_id: '5102' }), toolUse('get_payments', { order_id: '5102' })),
      calls(toolUse('get_tracking_events', { order_id: '5102' })),
      calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Marked delivered but never received.' })),
      answer('A colleague is reviewing your refund.'),
    ]);
    await deliverEvent(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings: settingsWith({ CASEWORK_DESKS: 'webhook' }) });
    const status = await settle(tw, stack.model, workflowId);
    assert.equal(status.status, 'awaiting_approval');
    const deadline = Date.now() + 30_000;
    const note = () => received.find((r) => (r as { workflow_id?: string }).workflow_id === workflowId && r.type === 'casework.note');
    while (!note() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    // What the tools answered, as the model was sent it: each result far longer than the skeleton's 100-character preview.
    const requests = stack.model.requests(workflowId, 'investigate');
    const results = requests.flatMap((r) => lastToolResults(r));
    const evidence = note()!
      .body.split('\n')
      .filter((line) => line.startsWith('- '));
    assert.ok(results.length >= 3 && results.every((r) => r.content.length > PREVIEW_CHARS), 'every result is longer than the skeleton keeps');
    assert.equal(evidence.length, 3);
    // The same lines the whole conversation the model was last sent gives.
    assert.deepEqual(
      evidence,
      toolEvidence(requests.at(-1)!.messages, { currency: 'GBP' }).map((line) => `- ${line}`),
    );
    assert.match(evidence[0]!, /^- Order 5102: \w+, placed \d{4}-\d\d-\d\d, total £/);
    assert.match(evidence[1]!, /^- Payments for order 5102: charged £/);
    assert.match(evidence[2]!, /^- Tracking for order 5102: \d{4}-\d\d-\d\d /);
    for (const line of evidence) assert.doesNotMatch(line, /[{}"]|\[…\]/, line);
  });
});
