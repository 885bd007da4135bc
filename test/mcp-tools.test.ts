import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { decideRefund, readStatus } from '../src/client/investigations';
import { connectMcpServers, type McpTools } from '../src/commerce/mcp/client';
import { mcpServerSettings } from '../src/commerce/mcp/settings';
import { MCP_DECISION_PREFIX } from '../src/context/wire';
import type { Database } from '../src/db/pool';
import { startMcpStandinHttp, type McpStandinHttp } from '../src/dev/mcp-standin';
import { investigationId } from '../src/schemas/event';
import { dataConverterFor } from '../src/temporal/data-converter';
import { openTestDatabase } from './support/db';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, scriptedModel, toolUse } from './support/scripted-model';
import { deliver, settle } from './support/scripted-run';
import { startTestWorker, type TestWorker } from './support/temporal';

// MCP tools in a real investigation (Temporal dev server, Postgres, the scripted model, the MCP
// stand-in over streamable HTTP and over stdio). The model is offered the declared tools, the
// same definitions on every step; a read-only tool's long result reaches it paged and cut; a
// money-moving tool is not called on the model's word but filed for a person, and once approved
// is called exactly once, also when the activity is retried after the server answered; a server
// that is down gives the model a clear tool error and the case goes to a person.

const model = scriptedModel();
let db: Database;
let tw: TestWorker;
let shop: McpStandinHttp;
let flaky: McpStandinHttp;
let mcp: McpTools;
/** How many money-moving calls fail after the server answered (as a connection dropped at that moment). */
let dropAfterCall = 0;

const SETTINGS = settingsWith({ CASEWORK_MCP_SERVERS: 'configured', CASEWORK_OUTAGE_BUDGET_SECONDS: '3' });

before(async () => {
  db = await openTestDatabase({ seed: true });
  shop = await startMcpStandinHttp();
  flaky = await startMcpStandinHttp();
  const configured = mcpServerSettings({
    CASEWORK_MCP_SERVERS: JSON.stringify({
      servers: {
        shop: {
          transport: 'http',
          url: shop.url,
          tools: { lookup_warranty: 'read-only', issue_store_credit: { kind: 'money-moving', idempotencyKeyArgument: 'idempotency_key', amountArgument: 'amount_cents' } },
        },
        local: {
          transport: 'stdio',
          command: process.execPath,
          args: ['--import', 'tsx', require.resolve('../src/dev/mcp-standin.ts'), '--stdio'],
          tools: { lookup_warranty: 'read-only' },
        },
        flaky: { transport: 'http', url: flaky.url, tools: { lookup_warranty: 'read-only' } },
      },
    }),
  });
  const real = await connectMcpServers(configured);
  mcp = {
    ...real,
    async call(offer, args) {
      const answered = await real.call(offer, args);
      if (offer.kind === 'money-moving' && dropAfterCall > 0) {
        dropAfterCall -= 1;
        throw new Error('the connection dropped after the server answered (injected)');
      }
      return answered;
    },
  };
  tw = await startTestWorker({ pool: db.app, model, mcp });
});

after(async () => {
  await tw?.stop();
  await mcp?.close();
  await shop?.close();
  await flaky?.close();
  await db?.close();
});

/** Replays a run's history against the workflow code the worker runs (the prebuilt bundle, with its interceptors, when there is one). */
async function replay(id: string) {
  const history = await tw.client.workflow.getHandle(id).fetchHistory();
  const code = process.env.CASEWORK_WORKFLOW_BUNDLE
    ? { workflowBundle: { codePath: process.env.CASEWORK_WORKFLOW_BUNDLE } }
    : { workflowsPath: require.resolve('../src/workflows') };
  await Worker.runReplayHistory({ ...code, dataConverter: dataConverterFor(tw.config, db.app) }, history, id);
}

describe('MCP tools in an investigation', () => {
  test('read-only tools over HTTP and stdio answer the model, long lists paged and long results cut, with the same definitions every step', async () => {
    const event = ticket('cust_dana', 'Is my order 7000 still under warranty? Also what are the terms on 7001?');
    const id = investigationId(event.ticketId);
    const uses = [toolUse('mcp_shop_lookup_warranty', { order_id: '7000' }), toolUse('mcp_local_lookup_warranty', { order_id: '7001' })];
    model.script(id, [calls(...uses), calls(toolUse('mcp_shop_lookup_warranty', { order_id: '7000', result_page: 5 })), answer('Order 7000 is covered until March 2027.')]);
    const status = await deliver(tw, model, event, SETTINGS);
    assert.equal(status.status, 'waiting_for_customer');

    const requests = model.requests(id, 'investigate');
    const offered = requests[0]!.tools.map((t) => t.name);
    for (const name of ['mcp_shop_lookup_warranty', 'mcp_shop_issue_store_credit', 'mcp_local_lookup_warranty', 'get_order'])
      assert.ok(offered.includes(name), `${name} is offered`);
    assert.ok(!offered.some((n) => n.includes('standin_counts')), 'a tool nobody declared is not offered');
    for (const r of requests.slice(1)) assert.deepEqual(r.tools, requests[0]!.tools, 'the same definitions on every step: the cached prefix holds');

    const [paged, cut] = lastToolResults(requests[1]!);
    const first = JSON.parse(paged!.content) as { claims: unknown[]; showing: string; next_page: number };
    assert.equal(first.claims.length, 10);
    assert.equal(first.showing, "claims 1-10 of 45, in the server's order");
    assert.equal(first.next_page, 2);
    assert.equal(cut!.is_error, false, 'the stdio server answered');
    assert.match(cut!.content, /^\{"order_id":"7001"/);
    assert.match(cut!.content, /\[cut: this result is \d+ characters long and only the first 6000 are shown/);
    const [last] = lastToolResults(requests[2]!);
    assert.match(last!.content, /"showing":"claims 41-45 of 45, in the server's order","next_page":null/);
    await replay(id);
  });

  test('a money-moving tool is refused without approval, then called exactly once with it, also when the activity is retried after the call', async () => {
    const event = ticket('cust_dana', 'The delay cost me a trip. Can I have some store credit on order 5102?');
    const id = investigationId(event.ticketId);
    const ask = toolUse('mcp_shop_issue_store_credit', { order_id: '5102', amount_cents: 1500, reason: 'Goodwill for the late parcel', idempotency_key: 'made-up-by-the-model' });
    model.script(id, [
      calls(ask),
      answer('A colleague is reviewing the store credit; I will write again once it is decided.'),
      answer('Your £15.00 store credit has been issued.'),
    ]);
    const waiting = await deliver(tw, model, event, SETTINGS);
    assert.equal(waiting.status, 'awaiting_approval');
    assert.equal(shop.state.invocations, 0, 'nothing reached the server on the model’s word');
    const [filed] = lastToolResults(model.requests(id, 'investigate')[1]!);
    assert.match(filed!.content, /"status":"awaiting_approval","called":false/);
    assert.match(filed!.content, /mcp_shop_issue_store_credit moves money, so casework did not call it: it asked a person to approve this exact call/);
    const pending = waiting.pendingApproval!;
    assert.deepEqual(pending.mcp, { tool: 'mcp_shop_issue_store_credit', arguments: { order_id: '5102', amount_cents: 1500, reason: 'Goodwill for the late parcel' } });
    assert.equal(pending.amount_cents, 1500, 'approvers’ limits apply to the declared amount');

    dropAfterCall = 1;
    await decideRefund(tw.client, id, { requestId: pending.request_id, decision: 'approved', approver: 'support-lead' });
    const done = await settle(tw, model, id, waiting.step);
    assert.equal(done.status, 'waiting_for_customer');
    assert.equal(shop.state.invocations, 2, 'the activity was retried after the server answered…');
    assert.equal(shop.state.credits.length, 1, '…and the credit was issued once');
    assert.match(shop.state.credits[0]!.idempotency_key!, /^mcpkey_/, 'under casework’s key, derived from the approval, not the model’s');

    const told = model.requests(id, 'investigate')[2]!;
    const note = JSON.stringify(told.messages.at(-1));
    assert.ok(note.includes(JSON.stringify(MCP_DECISION_PREFIX).slice(1, -1)), 'the model is told the decision');
    assert.match(note, /\\"called\\":true/);
    assert.match(note, /sc_1/);
    const { rows } = await db.admin.query<{ outcome: string; attempts: number; status: string }>(
      `SELECT c.outcome, c.attempts, r.status FROM mcp_calls c JOIN mcp_call_requests r USING (request_id) WHERE r.workflow_id = $1`,
      [id],
    );
    assert.deepEqual(rows, [{ outcome: 'succeeded', attempts: 2, status: 'called' }]);
    await replay(id);
  });

  test('a denied money-moving call is never made, and the model is told so', async () => {
    const event = ticket('cust_dana', 'Store credit for order 5102, please.');
    const id = investigationId(event.ticketId);
    model.script(id, [
      calls(toolUse('mcp_shop_issue_store_credit', { order_id: '5102', amount_cents: 900, reason: 'Goodwill' })),
      answer('A colleague is reviewing it.'),
      answer('I am sorry, we cannot offer credit this time.'),
    ]);
    const invocations = shop.state.invocations;
    const waiting = await deliver(tw, model, event, SETTINGS);
    await assert.rejects(
      decideRefund(tw.client, id, { requestId: waiting.pendingApproval!.request_id, decision: 'approved', approver: 'intern' }),
      /intern may not decide refunds/,
      'only a listed approver may allow it',
    );
    await decideRefund(tw.client, id, { requestId: waiting.pendingApproval!.request_id, decision: 'denied', approver: 'support-lead', reason: 'already compensated' });
    await settle(tw, model, id, waiting.step);
    assert.equal(shop.state.invocations, invocations);
    assert.match(JSON.stringify(model.requests(id, 'investigate')[2]!.messages.at(-1)), /Not approved, so mcp_shop_issue_store_credit was not called/);
    await replay(id);
  });

  test('a server that is down gives the model a clear tool error and the case goes to a person, never a crash', async () => {
    await flaky.close();
    const event = ticket('cust_dana', 'What is the warranty on order 5102?');
    const id = investigationId(event.ticketId);
    model.script(id, [calls(toolUse('mcp_flaky_lookup_warranty', { order_id: '5102' })), answer('A colleague will look at the warranty for you.')]);
    const status = await deliver(tw, model, event, SETTINGS);
    assert.equal(status.status, 'needs_human');
    assert.match(status.handOff!.reason, /the mcp_flaky_lookup_warranty tool stayed unavailable past the outage budget/);
    // The customer writes again: the model now reads the tool's error, in words, with nothing internal in it.
    await deliver(tw, model, ticket('cust_dana', 'Any news?', { ticketId: event.ticketId }), SETTINGS);
    const seen = JSON.stringify(model.requests(id, 'investigate')[1]!.messages);
    assert.match(seen, /The mcp_flaky_lookup_warranty tool is not answering right now, so it was not run\. A colleague has been asked to take over\./);
    assert.doesNotMatch(seen, /127\.0\.0\.1|ECONNREFUSED|fetch failed/, 'no host or connection error reaches the model');
    const after = await readStatus(tw.client, id);
    assert.notEqual(after.status, 'closed');
  });
});
