import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FRESHDESK_TOKEN_HEADER } from '../src/desk/freshdesk-inbound';
import { signIntercom } from '../src/desk/intercom-inbound';
import { SA } from '../src/schemas/search-attributes';
import { CUSTOMER, deskStack, FRESHDESK_TOKEN, INTERCOM_SECRET, ZENDESK_REQUESTER } from './support/desk-stack';
import { settle } from './support/scripted-run';
import { answer } from './support/scripted-model';

// Desk webhooks as the desks send them, over real HTTP into the real server, delivered to a
// real worker on the suite's Temporal dev server; replies land on the Zendesk stand-in.

const stack = deskStack();
const fixture = (name: string) => JSON.parse(readFileSync(join(__dirname, 'fixtures', 'desk', name), 'utf8')) as Record<string, any>;
let seq = 0;
const freshId = () => `${Date.now() % 1_000_000}${++seq}`;

async function post(desk: string, body: Buffer | string, headers: Record<string, string>) {
  const res = await fetch(`${stack.server.url}/webhooks/${desk}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** True when Temporal has a workflow of that id. */
const exists = (workflowId: string) =>
  stack.tw.client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      () => false,
    );

/** A Zendesk ticket on the stand-in with the requester's first comment, and the investigation's script. */
function zendeskTicket(text: string, reply = 'Thanks, I am looking into it now.') {
  const { ticketId, commentId } = stack.standin.createTicket({ requesterId: ZENDESK_REQUESTER, requesterName: 'Priya Raman', subject: 'Order', body: text });
  stack.model.script(`investigation-zendesk-${ticketId}`, [answer(reply)]);
  return { ticketId, commentId, workflowId: `investigation-zendesk-${ticketId}` };
}

/** The Intercom conversation.user.replied fixture for a conversation of its own, created now, signed. */
function intercomDelivery(options: { secret?: string } = {}) {
  const envelope = fixture('intercom-conversation-user-replied.json');
  const conversation = freshId();
  envelope.data.item.id = conversation;
  envelope.data.item.conversation_parts.conversation_parts[0].id = freshId();
  envelope.created_at = Math.floor(Date.now() / 1000);
  const body = Buffer.from(JSON.stringify(envelope));
  return { conversation, body, headers: { 'x-hub-signature': signIntercom(options.secret ?? INTERCOM_SECRET, body) } };
}

/** The Freshdesk automation-rule fixture for a ticket of its own. */
function freshdeskDelivery(token = FRESHDESK_TOKEN) {
  const hook = fixture('freshdesk-ticket-message.json');
  const ticket = freshId();
  hook.freshdesk_webhook.ticket_id = ticket;
  return { ticket, body: Buffer.from(JSON.stringify(hook)), headers: { [FRESHDESK_TOKEN_HEADER]: token } };
}

describe('desk webhooks over HTTP', () => {
  it('Zendesk: a correctly signed comment starts the investigation for the mapped customer, and its reply lands on the ticket', async () => {
    const { ticketId, commentId, workflowId } = zendeskTicket('My order 4471 arrived damaged.');
    const { body, headers } = stack.standin.commentWebhook(ticketId, commentId);
    const answered = await post('zendesk', body, headers);
    assert.equal(answered.status, 202, JSON.stringify(answered.body));
    assert.equal(answered.body.ticketId, `zendesk-${ticketId}`);
    const status = await settle(stack.tw, stack.model, workflowId);
    assert.equal(status.customerId, CUSTOMER);
    const described = await stack.tw.client.workflow.getHandle(workflowId).describe();
    assert.equal(described.typedSearchAttributes.get(SA.desk), 'zendesk');
    assert.equal(described.typedSearchAttributes.get(SA.deskTicketId), String(ticketId));
    await waitFor(() => stack.standin.ticket(ticketId)!.comments.some((c) => c.author_id === stack.standin.agent.id));
    const replies = stack.standin.ticket(ticketId)!.comments.filter((c) => c.author_id === stack.standin.agent.id);
    assert.deepEqual(
      replies.map((c) => [c.public, c.body]),
      [[true, 'Thanks, I am looking into it now.']],
    );
  });

  it('Zendesk: a wrong signature is 401 and starts nothing', async () => {
    const { ticketId, commentId, workflowId } = zendeskTicket('Where is my parcel?');
    const { body, headers } = stack.standin.commentWebhook(ticketId, commentId, { secret: 'not-the-signing-secret' });
    const answered = await post('zendesk', body, headers);
    assert.equal(answered.status, 401);
    assert.match(answered.body.error, /signature/i);
    assert.equal(await exists(workflowId), false);
  });

  it('Zendesk: a delivery signed beyond the horizon (8 days ago) is 401 stale_timestamp and starts nothing', async () => {
    const { ticketId, commentId, workflowId } = zendeskTicket('Replay me.');
    const old = new Date(Date.now() - 8 * 24 * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const { body, headers } = stack.standin.commentWebhook(ticketId, commentId, { timestamp: old });
    const answered = await post('zendesk', body, headers);
    assert.equal(answered.status, 401);
    assert.match(answered.body.error, /timestamp|window/i);
    assert.equal(await exists(workflowId), false);
  });

  it('Zendesk: the same webhook delivered five times is one event: one signal, one reply', async () => {
    const { ticketId, commentId, workflowId } = zendeskTicket('Sent once, delivered five times.', 'One answer only.');
    const { body, headers } = stack.standin.commentWebhook(ticketId, commentId);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post('zendesk', body, headers)).status);
    assert.ok(
      statuses.every((s) => s === 202 || s === 200),
      String(statuses),
    );
    await settle(stack.tw, stack.model, workflowId);
    const events = (await stack.tw.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'customerMessage');
    assert.equal(signals.length, 1);
    await waitFor(() => stack.standin.ticket(ticketId)!.comments.some((c) => c.author_id === stack.standin.agent.id));
    assert.equal(stack.standin.ticket(ticketId)!.comments.filter((c) => c.author_id === stack.standin.agent.id).length, 1);
  });

  it('Intercom: a correctly signed conversation.user.replied is accepted; a wrong signature is 401 and starts nothing', async () => {
    const good = intercomDelivery();
    stack.model.script(`investigation-intercom-${good.conversation}`, [answer('Looking into it.')]);
    const accepted = await post('intercom', good.body, good.headers);
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const status = await settle(stack.tw, stack.model, `investigation-intercom-${good.conversation}`);
    assert.equal(status.customerId, CUSTOMER);

    const bad = intercomDelivery({ secret: 'wrong-secret' });
    const refused = await post('intercom', bad.body, bad.headers);
    assert.equal(refused.status, 401);
    assert.equal(await exists(`investigation-intercom-${bad.conversation}`), false);
  });

  it('Freshdesk: the right shared token is accepted; a wrong one is 401 and starts nothing', async () => {
    const good = freshdeskDelivery();
    stack.model.script(`investigation-freshdesk-${good.ticket}`, [answer('Looking into it.')]);
    const accepted = await post('freshdesk', good.body, good.headers);
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const status = await settle(stack.tw, stack.model, `investigation-freshdesk-${good.ticket}`);
    assert.equal(status.customerId, CUSTOMER);

    const bad = freshdeskDelivery('not-the-token-at-all-0123456789');
    const refused = await post('freshdesk', bad.body, bad.headers);
    assert.equal(refused.status, 401);
    assert.equal(await exists(`investigation-freshdesk-${bad.ticket}`), false);
  });

  it('an Intercom topic casework does not handle (ping) is answered 202 ignored, and the request\u2019s log line says why', async () => {
    const envelope = fixture('intercom-ping.json');
    envelope.created_at = Math.floor(Date.now() / 1000);
    envelope.id = `notif_ping_${freshId()}`;
    const body = Buffer.from(JSON.stringify(envelope));
    const before = stack.logs.length;
    const answered = await post('intercom', body, { 'x-hub-signature': signIntercom(INTERCOM_SECRET, body) });
    assert.equal(answered.status, 202);
    assert.match(String(answered.body.ignored), /^ping/);
    const line = stack.logs.slice(before).find((l) => l.path === '/webhooks/intercom') as unknown as Record<string, unknown> | undefined;
    assert.ok(line, 'a log line for the delivery');
    assert.equal(line.outcome, 'ignored');
    assert.match(String(line.refused), /^ping/);
    assert.ok(!JSON.stringify(line).includes('something is fishy'), 'the log line never carries the body');
  });

  it('a malformed body from the desk is refused naming what is wrong, answered 202 (a 4xx would count toward the desk\u2019s breaker), and starts nothing', async () => {
    const hook = fixture('freshdesk-ticket-message.json');
    delete hook.freshdesk_webhook.ticket_id;
    const refused = await post('freshdesk', JSON.stringify(hook), { [FRESHDESK_TOKEN_HEADER]: FRESHDESK_TOKEN });
    assert.equal(refused.status, 202);
    assert.match(refused.body.refused, /^malformed: .*ticket_id/);
  });

  it('POST /events may not open a ticket in a desk namespace: replies would go to that desk ticket', async () => {
    const res = await fetch(`${stack.server.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ eventId: 'evt-ns-1', type: 'ticket.created', ticketId: 'zendesk-1', customerId: CUSTOMER, message: 'hi', receivedAt: new Date().toISOString() }),
    });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: string }).error, /reserved/);
    assert.equal(await exists('investigation-zendesk-1'), false);
  });

  it('shows webhooks received and rejected by reason on /metrics', async () => {
    const text = await (await fetch(`${stack.server.url}/metrics`)).text();
    assert.match(text, /casework_desk_webhooks_received_total\{desk="zendesk",outcome="accepted"\} [1-9]/);
    assert.match(text, /casework_desk_webhooks_rejected_total\{desk="zendesk",reason="bad_signature"\} 1/);
    assert.match(text, /casework_desk_webhooks_rejected_total\{desk="zendesk",reason="stale_timestamp"\} 1/);
    assert.match(text, /casework_desk_webhooks_rejected_total\{desk="intercom",reason="bad_signature"\} 1/);
    assert.match(text, /casework_desk_webhooks_rejected_total\{desk="freshdesk",reason="bad_signature"\} 1/);
    assert.match(text, /casework_desk_posts_total\{desk="zendesk",kind="reply",outcome="posted"\} [1-9]/);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
