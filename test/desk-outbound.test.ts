import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { idempotencyKey, type DeskPost } from '../src/desk/client';
import { DeskAuthError, DeskRateLimitedError, DeskRequestError, DeskUnavailableError, toDeskFailure } from '../src/desk/errors';
import { createFreshdeskClient } from '../src/desk/freshdesk-client';
import { createIntercomClient } from '../src/desk/intercom-client';
import { createPostToDesk } from '../src/desk/post';
import { withDeskRetries } from '../src/desk/retry';
import { configuredCustomerLookup } from '../src/desk/customers';
import { createWebhookClient, verifyCaseworkWebhook } from '../src/desk/webhook-client';
import { createZendeskClient, zendeskMarkerTag } from '../src/desk/zendesk-client';
import { acceptZendeskWebhook } from '../src/desk/zendesk-inbound';
import { formatThread, startDeskStandin, type DeskStandin } from '../src/dev/desk-standin';
import { refundAwaitingNote } from '../src/workflows/desk-notes';

// Replies against the Zendesk stand-in (src/dev/desk-standin.ts, a test double of Zendesk's
// API), and the Intercom, Freshdesk and generic-webhook adapters against recorded requests.

let standin: DeskStandin;
before(async () => {
  standin = await startDeskStandin();
});
after(async () => {
  await standin.close();
});

const zendesk = (timeoutMs = 2_000, apiToken?: string) =>
  createZendeskClient({ baseUrl: standin.url, email: standin.agent.email, apiToken: apiToken ?? standin.agent.apiToken, timeoutMs });
const reply = (ticketId: number, sequence: number, body = `Reply ${sequence}`): DeskPost => ({
  workflowId: `investigation-zendesk-${ticketId}`,
  externalTicketId: String(ticketId),
  kind: 'reply',
  sequence,
  body,
});
const noSleep = { sleep: async () => {} };
const publicAgentComments = (ticketId: number) => standin.ticket(ticketId)!.comments.filter((c) => c.author_id === standin.agent.id && c.public);

describe('posting to Zendesk', () => {
  it('posts a reply as a public comment and a note as a private one, with tags and status', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8001, subject: 'Broken mug', body: 'My mug arrived broken.' });
    const client = zendesk();
    assert.equal((await client.post(reply(ticketId, 1, 'Sorry about the mug. A refund is on its way for approval.'))).outcome, 'posted');
    await client.post({
      ...reply(ticketId, 1, 'Refund of 12.00 EUR for order 4471 awaits approval: casework approve …'),
      kind: 'note',
      tags: ['casework_awaiting_approval'],
      status: 'awaiting_approval',
    });
    const ticket = standin.ticket(ticketId)!;
    const [first, customerReply, note] = ticket.comments;
    assert.equal(first!.author_id, 8001);
    assert.deepEqual([customerReply!.public, customerReply!.body], [true, 'Sorry about the mug. A refund is on its way for approval.']);
    assert.equal(note!.public, false);
    // Waiting on a person inside the team is Zendesk's On-hold; Pending would mean waiting on the requester.
    assert.equal(ticket.status, 'hold');
    assert.ok(ticket.tags.includes('casework_awaiting_approval'));
    const thread = formatThread(standin, ticketId);
    assert.match(thread, /as the customer sees it:\n {2}\[customer 8001\] My mug arrived broken\.\n {2}\[casework\] Sorry about the mug/);
    assert.match(thread, /Internal notes \(1\):\n {2}\[casework\] Refund of 12\.00 EUR/);
  });

  it('leaves the team a note with amount, order, evidence and how to approve, and puts the ticket on hold', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8010, subject: 'Refund', body: 'Broken' });
    const note = refundAwaitingNote({
      workflowId: `investigation-zendesk-${ticketId}`,
      requestId: 'rr-1',
      orderId: '4471',
      amountCents: 1200,
      currency: 'GBP',
      reason: 'arrived damaged',
      evidence: ['carrier scan: box crushed'],
      approvers: ['support-lead'],
    });
    await zendesk().post({ ...reply(ticketId, 1, note.body), kind: 'note', tags: note.tags, status: note.status });
    const posted = standin.ticket(ticketId)!;
    const body = posted.comments.at(-1)!.body;
    assert.equal(posted.comments.at(-1)!.public, false);
    for (const part of ['£12.00', 'order 4471', 'carrier scan: box crushed', `casework approve investigation-zendesk-${ticketId} --request rr-1 --approver`])
      assert.ok(body.includes(part), part);
    assert.equal(posted.status, 'hold');
  });

  it('does not post again when the same reply is retried, because its key is on the ticket', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8002, subject: 'Late parcel', body: 'Where is it?' });
    const client = zendesk();
    const post = reply(ticketId, 1);
    assert.equal((await client.post(post)).outcome, 'posted');
    assert.equal((await client.post(post)).outcome, 'already_posted');
    assert.equal((await client.post(reply(ticketId, 2))).outcome, 'posted');
    assert.equal(publicAgentComments(ticketId).length, 2);
    assert.ok(standin.ticket(ticketId)!.tags.includes(zendeskMarkerTag(idempotencyKey(post))));
  });

  it('does not duplicate a reply whose post timed out after Zendesk applied it', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8003, subject: 'Refund', body: 'Refund please' });
    standin.inject({ kind: 'apply_then_timeout', count: 1, hangMs: 5_000 });
    const client = zendesk(300);
    await assert.rejects(client.post(reply(ticketId, 1)), DeskUnavailableError);
    assert.equal(publicAgentComments(ticketId).length, 1, 'the stand-in applied the timed-out post');
    const result = await withDeskRetries(() => client.post(reply(ticketId, 1)), noSleep);
    assert.equal(result.outcome, 'already_posted');
    assert.equal(publicAgentComments(ticketId).length, 1);
  });

  it('waits the Retry-After a 429 gives, then posts once', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8004, subject: 'Busy', body: 'Hello?' });
    standin.inject({ kind: 'rate_limit', count: 2, retryAfterSeconds: 7 });
    const waits: number[] = [];
    const client = zendesk();
    const first = await client.post(reply(ticketId, 1)).catch((e: unknown) => e);
    assert.ok(first instanceof DeskRateLimitedError);
    assert.equal(first.retryAfterSeconds, 7);
    const failure = toDeskFailure(first) as ApplicationFailure;
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, '7s');
    const result = await withDeskRetries(() => client.post(reply(ticketId, 1)), { sleep: async (ms) => void waits.push(ms) });
    assert.equal(result.outcome, 'posted');
    assert.deepEqual(waits, [7000]);
    assert.equal(publicAgentComments(ticketId).length, 1);
  });

  it('retries 500s with growing backoff, then posts once', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8005, subject: 'Outage', body: 'Hi' });
    standin.inject({ kind: 'server_error', count: 2 });
    const waits: number[] = [];
    const result = await withDeskRetries(() => zendesk().post(reply(ticketId, 1)), { baseDelayMs: 100, sleep: async (ms) => void waits.push(ms) });
    assert.equal(result.outcome, 'posted');
    assert.deepEqual(waits, [100, 200]);
    assert.equal(publicAgentComments(ticketId).length, 1);
  });

  it('fails a 401 at once, non-retryable, with a message naming the variables to check and no secret', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8006, subject: 'Auth', body: 'Hi' });
    standin.inject({ kind: 'unauthorized', count: 1 });
    let attempts = 0;
    const error = await withDeskRetries(() => (attempts++, zendesk().post(reply(ticketId, 1))), noSleep).catch((e: unknown) => e);
    assert.ok(error instanceof DeskAuthError);
    assert.equal(attempts, 1);
    assert.match(error.message, /CASEWORK_ZENDESK_API_TOKEN/);
    assert.doesNotMatch(error.message, new RegExp(standin.agent.apiToken));
    assert.equal((toDeskFailure(error) as ApplicationFailure).nonRetryable, true);
  });

  it('postToDesk routes by ticket id and turns a wrong credential into a non-retryable activity failure', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8007, subject: 'Route', body: 'Hi' });
    const failures: string[] = [];
    const postToDesk = createPostToDesk({
      clients: new Map([['zendesk', zendesk(2_000, 'wrong-token')]]),
      observer: { failed: (desk, kind, name) => failures.push(`${desk}/${kind}/${name}`) },
    });
    const input = { workflowId: `investigation-zendesk-${ticketId}`, ticketId: `zendesk-${ticketId}`, kind: 'reply' as const, sequence: 1, body: 'Hello' };
    const error = await postToDesk(input).catch((e: unknown) => e);
    assert.ok(error instanceof ApplicationFailure);
    assert.equal(error.nonRetryable, true);
    assert.equal(error.type, 'DeskAuthError');
    assert.deepEqual(failures, ['zendesk/reply/DeskAuthError']);
    const ok = createPostToDesk({ clients: new Map([['zendesk', zendesk()]]) });
    assert.deepEqual(await ok(input), { outcome: 'posted', idempotencyKey: idempotencyKey(input), desk: 'zendesk' });
    assert.equal((await ok({ ...input, ticketId: 'T-1001' })).outcome, 'skipped');
  });

  it('the stand-in refuses fields Zendesk does not document, and casework reports it as a bad request', async () => {
    const { ticketId } = standin.createTicket({ requesterId: 8008, subject: 'Strict', body: 'Hi' });
    const response = await fetch(`${standin.url}/api/v2/tickets/${ticketId}.json`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${standin.agent.email}/token:${standin.agent.apiToken}`).toString('base64')}` },
      body: JSON.stringify({ ticket: { comment: { body: 'x', visibility: 'public' } } }),
    });
    assert.equal(response.status, 422);
    assert.match(JSON.stringify(await response.json()), /comment\.visibility/);
    const anonymous = await fetch(`${standin.url}/api/v2/tickets/${ticketId}.json`);
    assert.equal(anonymous.status, 401);
    const blank = await zendesk()
      .post({ ...reply(ticketId, 1), body: '   ' })
      .catch((e: unknown) => e);
    assert.ok(blank instanceof DeskRequestError);
  });

  it('sends signed comment webhooks that the Zendesk adapter accepts', async () => {
    const { ticketId, commentId } = standin.createTicket({ requesterId: 8009, subject: 'Webhook', body: 'Parcel missing' });
    const { body, headers } = standin.commentWebhook(ticketId, commentId);
    const customers = configuredCustomerLookup({ customers: new Map([['zendesk:8009', 'C-8009']]), trustExternalId: false });
    const result = acceptZendeskWebhook({ headers, body }, { signingSecret: standin.webhookSecret, replayWindowSeconds: 300, customers }, new Date());
    assert.equal(result.outcome, 'accepted');
    if (result.outcome === 'accepted')
      assert.deepEqual([result.event.ticketId, result.event.customerId, result.event.message], [`zendesk-${ticketId}`, 'C-8009', 'Parcel missing']);
  });
});

/** A fetch that answers from a script and records each request. */
function scriptedFetch(answer: (method: string, url: string, body: unknown) => { status: number; json?: unknown; headers?: Record<string, string> }) {
  const calls: { method: string; url: string; body: unknown; headers: Record<string, string> }[] = [];
  const impl = (async (url: string, init: RequestInit) => {
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    calls.push({ method: String(init.method), url, body, headers: init.headers as Record<string, string> });
    const { status, json, headers } = answer(String(init.method), url, body);
    return new Response(json === undefined ? null : JSON.stringify(json), { status, headers });
  }) as unknown as typeof fetch;
  return { impl, calls };
}

describe('posting to Intercom and Freshdesk', () => {
  it('Intercom: announces a reply in an internal note carrying the key, posts the reply without it, and skips both on a retry', async () => {
    const parts: { part_type: string; body: string; author: { type: string; id: string } }[] = [];
    const fake = scriptedFetch((method, _url, body) => {
      if (method === 'GET') return { status: 200, json: { type: 'conversation', id: '147', state: 'open', conversation_parts: { conversation_parts: parts } } };
      const b = body as { message_type: string; body: string; admin_id: string };
      parts.push({ part_type: b.message_type, body: b.body, author: { type: 'admin', id: b.admin_id } });
      return { status: 200, json: { type: 'conversation', id: '147' } };
    });
    const client = createIntercomClient({ baseUrl: 'https://api.intercom.io', accessToken: 'tok', adminId: '814860', timeoutMs: 1000, fetch: fake.impl });
    const post: DeskPost = { workflowId: 'investigation-intercom-147', externalTicketId: '147', kind: 'reply', sequence: 1, body: 'Your refund is approved.' };
    assert.equal((await client.post(post)).outcome, 'posted');
    assert.equal((await client.post(post)).outcome, 'already_posted');
    const posts = fake.calls.filter((c) => c.method === 'POST');
    assert.deepEqual(
      posts.map((p) => [p.url, (p.body as Record<string, string>).message_type, (p.body as Record<string, string>).type]),
      [
        ['https://api.intercom.io/conversations/147/reply', 'note', 'admin'],
        ['https://api.intercom.io/conversations/147/reply', 'comment', 'admin'],
      ],
    );
    assert.deepEqual(Object.keys(posts[1]!.body as object).sort(), ['admin_id', 'body', 'message_type', 'type']);
    assert.match((posts[0]!.body as { body: string }).body, new RegExp(idempotencyKey(post)));
    assert.doesNotMatch((posts[1]!.body as { body: string }).body, /cw[0-9a-f]{24}|ref:/, 'the customer never sees the key');
    await client.post({ ...post, kind: 'note', sequence: 1 });
    assert.equal((fake.calls.at(-1)!.body as { message_type: string }).message_type, 'note');
  });

  it('Freshdesk: replies through /reply (announced in a private note with the key), notes through /notes private, and skips what is already there', async () => {
    const conversations: { body: string; body_text: string; private: boolean; incoming: boolean }[] = [];
    const fake = scriptedFetch((method, url, body) => {
      if (method === 'GET') return { status: 200, json: new URL(url).searchParams.get('page') === '1' ? conversations : [] };
      const b = body as { body?: string; private?: boolean };
      if (b.body) conversations.push({ body: b.body, body_text: b.body.replace(/<[^>]+>/g, ''), private: url.endsWith('/notes') && b.private === true, incoming: false });
      return { status: 201, json: { id: conversations.length } };
    });
    const client = createFreshdeskClient({ baseUrl: 'https://acme.freshdesk.com', apiKey: 'key', timeoutMs: 1000, fetch: fake.impl });
    const post: DeskPost = { workflowId: 'investigation-freshdesk-42', externalTicketId: '42', kind: 'reply', sequence: 1, body: 'We are on it.' };
    await client.post(post);
    await client.post({ ...post, kind: 'note', status: 'awaiting_approval' });
    assert.equal((await client.post(post)).outcome, 'already_posted');
    const writes = fake.calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${new URL(c.url).pathname}`);
    assert.deepEqual(writes, ['POST /api/v2/tickets/42/notes', 'POST /api/v2/tickets/42/reply', 'POST /api/v2/tickets/42/notes', 'PUT /api/v2/tickets/42']);
    assert.ok(fake.calls.filter((c) => c.url.endsWith('/notes')).every((c) => (c.body as { private: boolean }).private === true));
    assert.doesNotMatch((fake.calls.find((c) => c.url.endsWith('/reply'))!.body as { body: string }).body, /cw[0-9a-f]{24}|ref:/);
    // An internal wait is "Waiting on Third Party" (7), not Pending (3), which means waiting on the customer.
    assert.deepEqual(fake.calls.find((c) => c.method === 'PUT')!.body, { status: 7 });
    assert.match(fake.calls[0]!.headers.authorization!, /^Basic /);
    assert.ok(fake.calls.filter((c) => c.method === 'GET').every((c) => new URL(c.url).searchParams.get('per_page') === '100'));
  });
});

describe('the generic outbound webhook', () => {
  it('POSTs signed JSON a receiver can verify, with the same delivery id on every retry', async () => {
    const secret = 'webhook-secret';
    const received: { id: string; valid: boolean; body: Record<string, unknown> }[] = [];
    let failNext = 1;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const id = String(req.headers['x-casework-delivery']);
        const valid = verifyCaseworkWebhook({
          secret,
          timestamp: req.headers['x-casework-timestamp'] as string,
          signature: req.headers['x-casework-signature'] as string,
          body: raw,
          now: new Date(),
          windowSeconds: 300,
        });
        received.push({ id, valid, body: JSON.parse(raw.toString('utf8')) });
        if (failNext-- > 0) {
          res.writeHead(503).end();
          return;
        }
        // Receivers dedupe on the delivery id: a repeat answers 409.
        res.writeHead(received.filter((r) => r.id === id).length > 2 ? 409 : 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/casework`;
      const client = createWebhookClient({ url, secret, timeoutMs: 2000 });
      const post: DeskPost = { workflowId: 'investigation-T-1001', externalTicketId: 'T-1001', kind: 'reply', sequence: 3, body: 'Done.', status: 'closed' };
      assert.equal((await withDeskRetries(() => client.post(post), noSleep)).outcome, 'posted');
      assert.equal((await client.post(post)).outcome, 'already_posted');
      assert.equal(new Set(received.map((r) => r.id)).size, 1);
      assert.ok(received.every((r) => r.valid));
      assert.deepEqual(received[0]!.body, {
        id: idempotencyKey(post),
        type: 'casework.reply',
        workflow_id: 'investigation-T-1001',
        ticket_id: 'T-1001',
        sequence: 3,
        body: 'Done.',
        tags: [],
        status: 'closed',
      });
      assert.equal(verifyCaseworkWebhook({ secret: 'other', timestamp: '1', signature: 'v1=00', body: 'x', now: new Date(), windowSeconds: 300 }), false);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
