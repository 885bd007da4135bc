import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createMcpActivities, offeredDefinitions } from '../src/activities/mcp';
import { MCP_PAGE_SIZE, shapeMcpResult } from '../src/activities/tools/mcp-shape';
import { connectMcpServers, type McpTools } from '../src/commerce/mcp/client';
import { mcpServerSettings } from '../src/commerce/mcp/settings';
import { ConfigError } from '../src/config';
import { MAX_RESULT_CHARS } from '../src/context/result-cap';
import type { Database } from '../src/db/pool';
import { startMcpStandinHttp, type McpStandinHttp } from '../src/dev/mcp-standin';
import { UnavailableError } from '../src/errors';
import { openTestDatabase, unique } from './support/db';

// MCP tools below the workflow: configuration (a half-given server names its field), the offers
// (namespaced, undeclared tools left out, stable), result shaping (long lists paged, results
// capped with a cut marker), and the money-moving call's trail in Postgres against the MCP
// stand-in: never called without a recorded approval, and at most once per approval whatever
// attempt fails where.

const servers = (body: unknown) => mcpServerSettings({ CASEWORK_MCP_SERVERS: JSON.stringify(body) }, {});

describe('CASEWORK_MCP_SERVERS', () => {
  test('a half-configured server is a start error naming the variable and the field', () => {
    const cases: [unknown, RegExp][] = [
      [{ servers: { shop: { transport: 'http', tools: { lookup_warranty: 'read-only' } } } }, /CASEWORK_MCP_SERVERS: .*servers\.shop\.url/],
      [{ servers: { shop: { transport: 'stdio', tools: { lookup_warranty: 'read-only' } } } }, /servers\.shop\.command/],
      [{ servers: { shop: { transport: 'http', url: 'http://127.0.0.1:1/mcp', tools: { lookup_warranty: 'read-mostly' } } } }, /servers\.shop\.tools\.lookup_warranty/],
      [{ servers: { shop: { transport: 'http', url: 'http://127.0.0.1:1/mcp', tools: {} } } }, /servers\.shop\.tools: declare at least one tool/],
      [{ servers: { Shop: { transport: 'http', url: 'http://127.0.0.1:1/mcp', tools: { a: 'read-only' } } } }, /server names are lower-case/],
      [{ servers: { shop: { transport: 'ftp', url: 'x', tools: { a: 'read-only' } } } }, /servers\.shop\.transport/],
      [
        { servers: { shop: { transport: 'http', url: 'http://127.0.0.1:1/mcp', headersFromEnv: { Authorization: 'SHOP_MCP_TOKEN' }, tools: { a: 'read-only' } } } },
        /servers\.shop\.headersFromEnv\.Authorization names SHOP_MCP_TOKEN, which is not set/,
      ],
      [
        { servers: { shop: { transport: 'http', url: 'http://127.0.0.1:1/mcp', tools: { a: { kind: 'read-only', amountArgument: 'amount_cents' } } } } },
        /servers\.shop\.tools\.a: idempotencyKeyArgument and amountArgument are for money-moving tools only/,
      ],
    ];
    for (const [body, named] of cases)
      assert.throws(
        () => servers(body),
        (error: Error) => error instanceof ConfigError && named.test(error.message),
        JSON.stringify(body),
      );
    assert.throws(() => mcpServerSettings({ CASEWORK_MCP_SERVERS: '/nonexistent/mcp.json' }), /CASEWORK_MCP_SERVERS: cannot read the file \/nonexistent\/mcp\.json/);
    assert.throws(() => mcpServerSettings({ CASEWORK_MCP_SERVERS: '{"servers": ' }), /CASEWORK_MCP_SERVERS: not JSON/);
    assert.deepEqual(mcpServerSettings({}), [], 'unset: no servers');
  });
});

describe('MCP results', () => {
  test('a long list is paged and the result says which part it shows', () => {
    const claims = Array.from({ length: 45 }, (_, i) => ({ claim_id: `wc_${i}` }));
    const first = JSON.parse(shapeMcpResult(JSON.stringify({ order_id: '7000', claims }))) as { claims: unknown[]; showing: string; next_page: number | null };
    assert.equal(first.claims.length, MCP_PAGE_SIZE);
    assert.equal(first.showing, "claims 1-10 of 45, in the server's order");
    assert.equal(first.next_page, 2);
    const last = JSON.parse(shapeMcpResult(JSON.stringify({ claims }), 5)) as { claims: { claim_id: string }[]; showing: string; next_page: number | null };
    assert.deepEqual(
      last.claims.map((c) => c.claim_id),
      ['wc_40', 'wc_41', 'wc_42', 'wc_43', 'wc_44'],
    );
    assert.equal(last.next_page, null);
    assert.throws(() => shapeMcpResult(JSON.stringify({ claims }), 6), /Page 6 is past the end: there are 45 claims on 5 pages/);
    assert.throws(() => shapeMcpResult('{"claims": []}', 2), /no list longer than 10 items/);
    const top = JSON.parse(shapeMcpResult(JSON.stringify(claims))) as { items: unknown[]; showing: string };
    assert.equal(top.showing, "items 1-10 of 45, in the server's order");
  });

  test('a result past the size cap is cut, and the cut says how long the whole was', () => {
    const long = 'x'.repeat(20_000);
    const shaped = shapeMcpResult(long);
    assert.ok(shaped.startsWith('x'.repeat(MAX_RESULT_CHARS)));
    assert.match(shaped, /\[cut: this result is 20000 characters long and only the first 6000 are shown; ask for less/);
    assert.equal(shapeMcpResult('short'), 'short', 'a short result is left as it is');
  });
});

describe('money-moving MCP calls against the stand-in', () => {
  let db: Database;
  let standin: McpStandinHttp;
  let real: McpTools;
  /** What the next calls meet: thrown before the server is asked, after it answered, or nothing. */
  const faults: ('none' | 'before' | 'after')[] = [];
  let acts: ReturnType<typeof createMcpActivities>;

  before(async () => {
    db = await openTestDatabase();
    standin = await startMcpStandinHttp();
    const tools = { lookup_warranty: 'read-only', issue_store_credit: { kind: 'money-moving', idempotencyKeyArgument: 'idempotency_key', amountArgument: 'amount_cents' } };
    real = await connectMcpServers(
      servers({
        servers: {
          shop: { transport: 'http', url: standin.url, tools },
          // The same server declared without its idempotency key: casework can then promise at most once, not exactly once.
          nokey: { transport: 'http', url: standin.url, tools: { issue_store_credit: { kind: 'money-moving', amountArgument: 'amount_cents' } } },
        },
      }),
    );
    const faulty: McpTools = {
      ...real,
      async call(offer, args) {
        const fault = faults.shift() ?? 'none';
        if (fault === 'before') throw new UnavailableError('connection refused (injected)');
        const answer = await real.call(offer, args);
        if (fault === 'after') throw new UnavailableError('the connection dropped after the server answered (injected)');
        return answer;
      },
    };
    acts = createMcpActivities({ pool: db.app, mcp: faulty });
  });
  after(async () => {
    await real?.close();
    await standin?.close();
    await db?.close();
  });

  test('offers are namespaced, leave out what configuration does not declare, and hide the key casework fills', () => {
    const names = real.offers.tools.map((t) => t.name);
    assert.deepEqual(names, ['mcp_nokey_issue_store_credit', 'mcp_shop_issue_store_credit', 'mcp_shop_lookup_warranty']);
    assert.ok(!names.some((n) => n.includes('standin_counts')), 'a tool the server offers but nobody declared is not offered');
    const credit = real.offers.tools.find((t) => t.name === 'mcp_shop_issue_store_credit')!;
    assert.ok(!('idempotency_key' in (credit.definition.input_schema.properties as object)), 'the model is not asked for the key');
    assert.match(credit.definition.description!, /Moves money: calling it asks a person to approve this exact call/);
    assert.deepEqual(
      offeredDefinitions(real, real.offers.digest),
      real.offers.tools.map((t) => t.definition),
    );
    assert.throws(() => offeredDefinitions(real, 'other'), /this run offers the MCP tools of digest other, and this worker's MCP servers offer/);
  });

  test('a declared tool the server does not offer stops the start, naming it', async () => {
    await assert.rejects(
      connectMcpServers(servers({ servers: { shop: { transport: 'http', url: standin.url, tools: { refund_everything: 'money-moving' } } } })),
      /servers\.shop\.tools\.refund_everything: the server offers no tool "refund_everything" \(it offers: lookup_warranty, issue_store_credit, standin_counts\)/,
    );
    await assert.rejects(
      connectMcpServers(servers({ servers: { gone: { transport: 'http', url: 'http://127.0.0.1:9/mcp', tools: { a: 'read-only' } } } })),
      (error: Error) => error instanceof UnavailableError && /the MCP server "gone" \(CASEWORK_MCP_SERVERS\) could not be reached/.test(error.message),
    );
  });

  test('whatever attempt fails where, credits issued = approvals (exactly once with a key, at most once without)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            approve: fc.boolean(),
            keyed: fc.boolean(),
            faults: fc.array(fc.constantFrom<'none' | 'before' | 'after'>('none', 'before', 'after'), { maxLength: 3 }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        async (calls) => {
          for (const c of calls) {
            n += 1;
            const tool = c.keyed ? 'mcp_shop_issue_store_credit' : 'mcp_nokey_issue_store_credit';
            const context = { customerId: 'cust_dana', ticketId: 'T-mcp', workflowId: unique('wf'), toolUseId: unique('toolu') };
            const input = { order_id: '5102', amount_cents: 100 + n, reason: `goodwill ${n}` };
            const filing = await acts.requestMcpCall({ name: tool, input, context });
            assert.ok('filed' in filing, JSON.stringify(filing));
            const requestId = filing.filed.request_id;
            assert.deepEqual(await acts.requestMcpCall({ name: tool, input, context }), filing, 'a retried request finds the one filed');
            const before = standin.state.invocations;
            const credits = standin.state.credits.length;

            const unapproved = await acts.callMcpTool({ name: tool, input, context, approval: { requestId } });
            assert.equal(unapproved.is_error, true);
            assert.match(unapproved.content, /has no recorded approval: it is still awaiting a person's decision, so .* was not called/);
            const bare = await acts.callMcpTool({ name: tool, input, context });
            assert.match(bare.content, /moves money, so it is called only on a person's recorded approval of the exact call; it was not called/);
            assert.equal(standin.state.invocations, before, 'nothing reached the server without an approval');

            await acts.recordMcpDecision({
              customerId: 'cust_dana',
              requestId,
              decision: c.approve ? 'approved' : 'denied',
              approver: 'support-lead',
              reason: c.approve ? null : 'not this time',
              decidedAt: new Date().toISOString(),
            });
            faults.splice(0, faults.length, ...c.faults);
            let outcome: Awaited<ReturnType<typeof acts.callMcpTool>> | undefined;
            for (let attempt = 0; attempt < 10 && !outcome; attempt += 1) {
              // Temporal retries an attempt that failed: the same call, with the same approval.
              outcome = await acts.callMcpTool({ name: tool, input: {}, context, approval: { requestId } }).catch(() => undefined);
            }
            assert.ok(outcome, 'an attempt finished');
            const again = await acts.callMcpTool({ name: tool, input: {}, context, approval: { requestId } });
            assert.deepEqual(again, outcome, 'a later attempt answers what was recorded, and calls nothing');
            const issued = standin.state.credits.length - credits;
            if (!c.approve) {
              assert.equal(issued, 0);
              assert.match(outcome.content, /was denied by support-lead \(not this time\)/);
            } else if (c.keyed) {
              assert.equal(issued, 1, `exactly one credit for an approval (faults ${c.faults.join(',')})`);
              assert.equal(outcome.call, 'succeeded');
              assert.equal(standin.state.credits.at(-1)!.amount_cents, 100 + n, 'the approved arguments, as filed');
            } else {
              assert.ok(issued <= 1, 'never twice');
              if (outcome.call === 'succeeded') assert.equal(issued, 1);
              else assert.equal(outcome.call, 'unknown', 'a call cut off without a key is reported for a person to check, not repeated');
            }
          }
        },
      ),
      { numRuns: 12 },
    );
    const { rows } = await db.admin.query<{ approvals: string; calls: string; keyed_credits: string }>(
      `SELECT (SELECT count(*) FROM mcp_call_decisions WHERE decision = 'approved') AS approvals,
              (SELECT count(*) FROM mcp_calls) AS calls,
              (SELECT count(*) FROM mcp_calls WHERE outcome = 'succeeded') AS keyed_credits`,
    );
    assert.equal(rows[0]!.calls, rows[0]!.approvals, 'one call row per approval');
    assert.ok(Number(rows[0]!.keyed_credits) <= standin.state.credits.length);
  });

  test('the database holds no call without a recorded approval of that very request', async () => {
    await assert.rejects(
      db.admin.query(`INSERT INTO mcp_calls (approval_id, customer_id, request_id, idempotency_key) VALUES ('apr_none', 'cust_dana', 'req_none', 'k_none')`),
      /violates foreign key constraint/,
    );
  });
});
