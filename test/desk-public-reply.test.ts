import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import { loadConfig } from '../src/config';
import { describeLeaks, publicReplyLeaks, type LeakKind } from '../src/context/public-reply';
import { formatMoney } from '../src/context/money';
import { idempotencyKey, markerLine, toHtml, type DeskPost } from '../src/desk/client';
import { rateLimitDelaySeconds } from '../src/desk/errors';
import { createFreshdeskClient } from '../src/desk/freshdesk-client';
import { createIntercomClient } from '../src/desk/intercom-client';
import { FRESHDESK_LIFECYCLE, INTERCOM_LIFECYCLE, parseIntercomState, statusTable, ZENDESK_LIFECYCLE } from '../src/desk/lifecycle';
import { createPostToDesk } from '../src/desk/post';
import { readBack, replyMarkerNote } from '../src/desk/read-back';
import { deskSettings } from '../src/desk/settings';
import { startFreshdeskStandin, type FreshdeskStandin } from '../src/dev/freshdesk-standin';
import { startIntercomStandin, type IntercomStandin } from '../src/dev/intercom-standin';

// What customers must never see, proven over generated replies; the key's read-back on Intercom
// and Freshdesk (stand-ins: test doubles of their APIs); each desk's rate-limit header; and the
// lifecycle settings checked at start.

/** Words a customer-facing reply is made of: plain sentences, money as money, order numbers, dates. */
const sentence = fc
  .array(
    fc.oneof(
      fc.constantFrom('Thank you', 'your order', 'has shipped', 'I am sorry', 'a colleague', 'will reply', 'refund', 'approved', 'the courier', 'tomorrow', 'today', 'here', 'we'),
      fc.integer({ min: 1, max: 999_999 }).map((n) => formatMoney(n, 'GBP')),
      fc.integer({ min: 1000, max: 9999 }).map((n) => `order ${n}`),
      fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    ),
    { minLength: 1, maxLength: 30 },
  )
  .map((words) => `${words.join(' ')}.`);

const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
/** Internal details of each kind, as they would appear if they slipped into a reply. */
const planted: Record<LeakKind, fc.Arbitrary<string>> = {
  marker: fc.oneof(
    hex(24).map((h) => `ref: cw${h}`),
    hex(24).map((h) => `cw${h}`),
    fc.constantFrom('casework_needs_human', 'casework_awaiting_approval'),
  ),
  internal_id: fc.oneof(
    fc.tuple(fc.constantFrom('req', 'apr', 'rfd'), hex(16)).map(([p, h]) => `${p}_${h}`),
    fc.integer({ min: 1, max: 99_999 }).map((n) => `investigation-zendesk-${n}`),
  ),
  minor_units: fc.integer({ min: 1, max: 1_000_000 }).map((n) => `${n} cents`),
  tool_error: fc.constantFrom('ToolError: refused', 'TypeError: x is undefined', 'is_error', 'SQLSTATE 23505', 'ECONNREFUSED', 'HTTP 503'),
  stack_trace: fc.constantFrom('\n    at requestRefund (/app/src/activities/tools/refunds.ts:107:11)', ' (refunds.js:10:3)'),
};

describe('nothing internal in a public reply', () => {
  it('finds nothing in replies made of customer words, money in pounds, order numbers and dates', () => {
    fc.assert(
      fc.property(sentence, (reply) => {
        assert.deepEqual(publicReplyLeaks(reply), [], reply);
      }),
      { numRuns: 500 },
    );
  });

  it('finds every kind of internal detail planted anywhere in a reply, and names its kind', () => {
    const kind = fc.constantFrom(...(Object.keys(planted) as LeakKind[]));
    const plantedReply = kind.chain((k) => fc.tuple(fc.constant(k), sentence, planted[k], sentence));
    fc.assert(
      fc.property(plantedReply, ([k, before, leak, after]) => {
        const reply = `${before} ${leak} ${after}`;
        const found = publicReplyLeaks(reply);
        assert.ok(
          found.some((f) => f.kind === k),
          `${k} not found in: ${reply}`,
        );
        assert.match(describeLeaks(found), /\("/);
      }),
      { numRuns: 500 },
    );
  });

  it("never lets a post's marker reach a public reply on Intercom or Freshdesk, over generated bodies", async () => {
    const sent: { url: string; body: Record<string, unknown> }[] = [];
    const fake = (async (url: string, init: RequestInit) => {
      if (init.method === 'GET')
        return new Response(url.includes('/conversations?') ? '[]' : JSON.stringify({ state: 'open', conversation_parts: { conversation_parts: [] } }), { status: 200 });
      sent.push({ url, body: JSON.parse(init.body as string) as Record<string, unknown> });
      return new Response('{}', { status: 200 });
    }) as unknown as typeof fetch;
    const clients = [
      createIntercomClient({ baseUrl: 'https://api.intercom.io', accessToken: 't', adminId: '1', timeoutMs: 1000, fetch: fake }),
      createFreshdeskClient({ baseUrl: 'https://acme.freshdesk.com', apiKey: 'k', timeoutMs: 1000, fetch: fake }),
    ];
    await fc.assert(
      fc.asyncProperty(sentence, fc.integer({ min: 1, max: 50 }), async (body, sequence) => {
        sent.length = 0;
        for (const client of clients) await client.post({ workflowId: 'investigation-T-1', externalTicketId: '9', kind: 'reply', sequence, body });
        const publicBodies = sent
          .filter((s) => s.body.message_type === 'comment' || (s.url.endsWith('/reply') && s.body.message_type === undefined))
          .map((s) => String(s.body.body));
        assert.equal(publicBodies.length, 2);
        for (const b of publicBodies) assert.deepEqual(publicReplyLeaks(b), [], b);
      }),
      { numRuns: 50 },
    );
  });
});

describe('the key read back from the thread', () => {
  it('a note carries its key; a reply is found after its marker note, and only the note is not enough', () => {
    const post = { workflowId: 'investigation-intercom-1', kind: 'reply' as const, sequence: 2 };
    const key = idempotencyKey(post);
    const body = 'It arrives tomorrow & not later.';
    const note = { body: toHtml(replyMarkerNote(2, key)), byCasework: true, isPublic: false };
    const reply = { body: toHtml(body), byCasework: true, isPublic: true };
    const later = { body: toHtml(replyMarkerNote(3, idempotencyKey({ ...post, sequence: 3 }))), byCasework: true, isPublic: false };
    assert.equal(readBack([], 'reply', key, body), 'absent');
    assert.equal(readBack([note], 'reply', key, body), 'note_only');
    assert.equal(readBack([note, reply], 'reply', key, body), 'posted');
    // The same words posted as a later reply do not count for this one.
    assert.equal(readBack([note, later, reply], 'reply', key, body), 'note_only');
    assert.equal(readBack([{ ...reply, byCasework: false }, note], 'reply', key, body), 'note_only');
    assert.equal(readBack([{ body: `Refund note\n${markerLine(key)}`, byCasework: true, isPublic: false }], 'note', key, 'Refund note'), 'posted');
  });

  describe('against the stand-ins', () => {
    let intercom: IntercomStandin;
    let freshdesk: FreshdeskStandin;
    before(async () => {
      intercom = await startIntercomStandin();
      freshdesk = await startFreshdeskStandin();
    });
    after(async () => {
      await intercom.close();
      await freshdesk.close();
    });

    it('Freshdesk: reads the conversations to the last page, so a reply on a ticket with 130 conversations is posted once', async () => {
      const id = freshdesk.createTicket(7001, 'Broken mug');
      freshdesk.addNotes(id, 130);
      const client = createFreshdeskClient({ baseUrl: freshdesk.url, apiKey: freshdesk.apiKey, timeoutMs: 2000 });
      const post: DeskPost = { workflowId: 'investigation-freshdesk-x', externalTicketId: String(id), kind: 'reply', sequence: 1, body: 'A new mug is on its way.' };
      assert.equal((await client.post(post)).outcome, 'posted');
      assert.equal((await client.post(post)).outcome, 'already_posted');
      const conversations = freshdesk.ticket(id)!.conversations;
      assert.equal(conversations.filter((c) => !c.private).length, 1);
      assert.ok(
        freshdesk.requests.some((r) => /[?&]page=2\b/.test(r.path)),
        'page 2 was read',
      );
      const customerSees = conversations.filter((c) => !c.private).map((c) => c.body_text);
      assert.deepEqual(customerSees, ['A new mug is on its way.']);
    });

    it('Intercom: a retry that finds the marker note but no reply posts the reply alone, once', async () => {
      const id = intercom.createConversation('5d6a4c8e0e8a2b1c3d4e5f60', 'Where is my parcel?');
      const client = createIntercomClient({ baseUrl: intercom.url, accessToken: intercom.accessToken, adminId: intercom.adminId, timeoutMs: 2000 });
      const post: DeskPost = { workflowId: 'investigation-intercom-y', externalTicketId: id, kind: 'reply', sequence: 1, body: 'It arrives tomorrow.' };
      // An earlier attempt posted the note, then died before the reply.
      const res = await fetch(`${intercom.url}/conversations/${id}/reply`, {
        method: 'POST',
        headers: { authorization: `Bearer ${intercom.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message_type: 'note', type: 'admin', admin_id: intercom.adminId, body: toHtml(replyMarkerNote(1, idempotencyKey(post))) }),
      });
      assert.equal(res.status, 200);
      assert.equal((await client.post(post)).outcome, 'posted');
      assert.equal((await client.post(post)).outcome, 'already_posted');
      const parts = intercom.conversation(id)!.parts;
      assert.deepEqual(
        parts.map((p) => p.part_type),
        ['comment', 'note', 'comment'],
      );
    });

    it('Intercom: waiting on the customer may be configured as snoozed; the snooze lies in the future and the customer\u2019s reply wakes it', async () => {
      const id = intercom.createConversation('5d6a4c8e0e8a2b1c3d4e5f60', 'Is it shipped?');
      const states = statusTable(INTERCOM_LIFECYCLE, 'awaiting_customer=snoozed', 'CASEWORK_INTERCOM_STATES', parseIntercomState, 'an Intercom state');
      const client = createIntercomClient({ baseUrl: intercom.url, accessToken: intercom.accessToken, adminId: intercom.adminId, timeoutMs: 2000, states, snoozeSeconds: 3600 });
      const post: DeskPost = { workflowId: 'investigation-intercom-s', externalTicketId: id, kind: 'reply', sequence: 1, body: 'Yes, this morning.', status: 'awaiting_customer' };
      await client.post(post);
      assert.equal(intercom.conversation(id)!.state, 'snoozed');
      intercom.addContactReply(id, 'Thanks!');
      await client.post({ ...post, kind: 'note', body: 'casework: the case is closed.', status: 'closed' });
      assert.deepEqual(intercom.stateHistory(id), ['open', 'snoozed', 'open', 'closed']);
    });

    it('Intercom: a 429 names its end in X-RateLimit-Reset; a short one is waited out inside the post and counted', async () => {
      const id = intercom.createConversation('5d6a4c8e0e8a2b1c3d4e5f60', 'Hello');
      const client = createIntercomClient({ baseUrl: intercom.url, accessToken: intercom.accessToken, adminId: intercom.adminId, timeoutMs: 2000 });
      const waits: number[] = [];
      const limited: string[] = [];
      const postToDesk = createPostToDesk({
        clients: new Map([['intercom', client]]),
        observer: { rateLimited: (desk, seconds, handling) => limited.push(`${desk} ${seconds} ${handling}`) },
        rateLimit: { maxWaitSeconds: 10, sleep: async (ms) => void waits.push(ms) },
      });
      intercom.rateLimit(1, 2);
      const input = { workflowId: 'investigation-intercom-z', ticketId: `intercom-${id}`, kind: 'reply' as const, sequence: 1, body: 'Hello!' };
      assert.equal((await postToDesk(input)).outcome, 'posted');
      assert.deepEqual(waits, [2000]);
      assert.deepEqual(limited, ['intercom 2 waited']);

      // A long one is left to Temporal's retry, after exactly the desk's delay.
      intercom.rateLimit(1, 120);
      const failure = await postToDesk({ ...input, sequence: 2 }).catch((e: unknown) => e);
      assert.ok(failure instanceof ApplicationFailure);
      assert.equal(failure.nextRetryDelay, '120s');
      assert.equal(failure.nonRetryable, false);
      assert.deepEqual(limited, ['intercom 2 waited', 'intercom 120 deferred']);
    });

    it('Freshdesk: Retry-After is honoured the same way', async () => {
      const id = freshdesk.createTicket(7001, 'Hello');
      const waits: number[] = [];
      const postToDesk = createPostToDesk({
        clients: new Map([['freshdesk', createFreshdeskClient({ baseUrl: freshdesk.url, apiKey: freshdesk.apiKey, timeoutMs: 2000 })]]),
        rateLimit: { maxWaitSeconds: 10, sleep: async (ms) => void waits.push(ms) },
      });
      freshdesk.rateLimit(2, 3);
      assert.equal((await postToDesk({ workflowId: 'investigation-freshdesk-w', ticketId: `freshdesk-${id}`, kind: 'note', sequence: 1, body: 'Note' })).outcome, 'posted');
      assert.deepEqual(waits, [3000, 3000]);
    });
  });

  it('reads each header as its desk documents it, and bounds the wait', () => {
    const now = Date.parse('2026-12-04T10:00:00Z');
    assert.equal(rateLimitDelaySeconds({ retryAfter: '7', rateLimitReset: null }, now), 7);
    assert.equal(rateLimitDelaySeconds({ retryAfter: null, rateLimitReset: String(now / 1000 + 45) }, now), 45);
    assert.equal(rateLimitDelaySeconds({ retryAfter: null, rateLimitReset: String(now / 1000 - 5) }, now), 1, 'a reset already past waits a second, not a negative time');
    assert.equal(rateLimitDelaySeconds({ retryAfter: '999999', rateLimitReset: null }, now), 3600);
    assert.equal(rateLimitDelaySeconds({ retryAfter: null, rateLimitReset: null }, now), 30);
  });
});

describe('the lifecycle settings', () => {
  const base = {
    CASEWORK_DESKS: 'zendesk,intercom,freshdesk',
    CASEWORK_ZENDESK_BASE_URL: 'https://acme.zendesk.com',
    CASEWORK_ZENDESK_EMAIL: 'bot@acme.com',
    CASEWORK_ZENDESK_API_TOKEN: 't',
    CASEWORK_ZENDESK_WEBHOOK_SECRET: 's',
    CASEWORK_INTERCOM_ACCESS_TOKEN: 't',
    CASEWORK_INTERCOM_CLIENT_SECRET: 's',
    CASEWORK_INTERCOM_ADMIN_ID: '814860',
    CASEWORK_FRESHDESK_BASE_URL: 'https://acme.freshdesk.com',
    CASEWORK_FRESHDESK_API_KEY: 'k',
    CASEWORK_FRESHDESK_WEBHOOK_TOKEN: 'w',
  };

  it('documents defaults: an internal wait is On-hold / Waiting on Third Party, waiting on the customer Pending, a closed case solved / resolved / closed', () => {
    assert.deepEqual(
      [ZENDESK_LIFECYCLE.awaiting_approval, ZENDESK_LIFECYCLE.with_person, ZENDESK_LIFECYCLE.awaiting_customer, ZENDESK_LIFECYCLE.closed],
      ['hold', 'hold', 'pending', 'solved'],
    );
    assert.deepEqual([FRESHDESK_LIFECYCLE.awaiting_approval, FRESHDESK_LIFECYCLE.awaiting_customer, FRESHDESK_LIFECYCLE.closed], [7, 3, 4]);
    assert.equal(INTERCOM_LIFECYCLE.closed, 'closed');
    assert.doesNotThrow(() =>
      deskSettings(
        loadConfig({
          ...base,
          CASEWORK_ZENDESK_STATUSES: 'awaiting_customer=open',
          CASEWORK_FRESHDESK_STATUSES: 'awaiting_approval=6',
          CASEWORK_INTERCOM_STATES: 'awaiting_customer=snoozed',
        }),
      ),
    );
  });

  it('refuses at start a status the desk does not have, a state casework does not know, or a group that is not an id, naming the variable', () => {
    const bad = (env: Record<string, string>, pattern: RegExp) => assert.throws(() => deskSettings(loadConfig({ ...base, ...env })), pattern);
    bad({ CASEWORK_ZENDESK_STATUSES: 'awaiting_approval=on-hold' }, /CASEWORK_ZENDESK_STATUSES: "on-hold" for awaiting_approval is not a Zendesk status casework may set/);
    bad({ CASEWORK_ZENDESK_STATUSES: 'closed=closed' }, /CASEWORK_ZENDESK_STATUSES: "closed" for closed is not a Zendesk status/);
    bad({ CASEWORK_FRESHDESK_STATUSES: 'closed=1' }, /CASEWORK_FRESHDESK_STATUSES: "1" for closed is not a Freshdesk status id/);
    bad({ CASEWORK_INTERCOM_STATES: 'waiting=snoozed' }, /CASEWORK_INTERCOM_STATES: "waiting" is not a case state/);
    bad({ CASEWORK_INTERCOM_STATES: 'closed' }, /CASEWORK_INTERCOM_STATES: "closed" is not state=status/);
    bad({ CASEWORK_ZENDESK_HANDOFF_GROUP_ID: 'support' }, /CASEWORK_ZENDESK_HANDOFF_GROUP_ID: "support" is not a group id/);
    bad({ CASEWORK_FRESHDESK_HANDOFF_GROUP_ID: '-4' }, /CASEWORK_FRESHDESK_HANDOFF_GROUP_ID/);
  });

  it('a half-configured desk fails at start, naming the missing variable, for the server and the worker alike (one function builds both)', () => {
    const { CASEWORK_FRESHDESK_API_KEY: _key, ...withoutKey } = base;
    assert.throws(() => deskSettings(loadConfig(withoutKey)), /CASEWORK_FRESHDESK_API_KEY is required when CASEWORK_DESKS lists freshdesk/);
    assert.throws(
      () => deskSettings(loadConfig({ CASEWORK_DESKS: 'webhook', CASEWORK_DESK_WEBHOOK_URL: 'https://x.example/hook' })),
      /CASEWORK_DESK_WEBHOOK_SECRET is required when CASEWORK_DESKS lists webhook/,
    );
  });
});
