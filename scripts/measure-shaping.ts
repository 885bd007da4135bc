import type { PoolClient } from 'pg';
import { createToolActivities } from '../src/activities/tools';
import { loadConfig } from '../src/config';
import { migrate } from '../src/db/migrate';
import { openDatabase, withCustomer, type Database } from '../src/db/pool';
import { DEMO, seedDemoData } from '../src/dev/demo-data/seed';
import type { ToolCall, ToolOutcome } from '../src/schemas/tool-call';
import { estimateTokens } from '../src/context/tokens';

// `npx tsx scripts/measure-shaping.ts`: how much result shaping at the source saves
// (docs/architecture.md, "Working memory"). For each tool on the seeded demo data it compares the tokens of the
// raw rows (JSON of SELECT * over every row the call concerns, what a tool that simply passed
// rows through would return) with the tokens of the shaped result the model actually reads.
// It runs on a fresh in-memory embedded Postgres, so the refund writes it measures touch nothing.

interface Measurement {
  tool: string;
  call: string;
  rawRows: number;
  rawTokens: number;
  shapedTokens: number;
}

type Tools = ReturnType<typeof createToolActivities>;
type ToolName = Exclude<keyof Tools, 'recordRefundDecision'>;

async function selectAll(db: Database, customerId: string, queries: [string, unknown[]][]): Promise<unknown[]> {
  return withCustomer(db.app, customerId, async (client: PoolClient) => {
    const rows: unknown[] = [];
    for (const [sql, params] of queries) rows.push(...(await client.query<Record<string, unknown>>(sql, params)).rows);
    return rows;
  });
}

async function shaped(tools: Tools, name: ToolName, input: unknown, customerId: string, toolUseId = `measure-${name}`): Promise<string> {
  const call: ToolCall = { name, input, context: { customerId, ticketId: 'measure', workflowId: 'measure-shaping', toolUseId } };
  const outcome: ToolOutcome = await tools[name](call);
  if (outcome.is_error) throw new Error(`${name} failed: ${outcome.content}`);
  return outcome.content;
}

async function measureAll(db: Database): Promise<Measurement[]> {
  const tools = createToolActivities({ pool: db.app });
  const { dana, marco } = DEMO.customers;
  const order = DEMO.orders.notDelivered;
  const out: Measurement[] = [];
  const add = async (tool: string, call: string, customerId: string, raw: [string, unknown[]][], text: string | string[]) => {
    const rows = await selectAll(db, customerId, raw);
    const texts = Array.isArray(text) ? text : [text];
    out.push({ tool, call, rawRows: rows.length, rawTokens: estimateTokens(JSON.stringify(rows)), shapedTokens: texts.reduce((n, t) => n + estimateTokens(t), 0) });
  };

  await add(
    'get_order',
    `order ${order}`,
    dana,
    [
      ['SELECT * FROM orders WHERE order_id = $1', [order]],
      ['SELECT * FROM shipments WHERE order_id = $1', [order]],
    ],
    await shaped(tools, 'get_order', { order_id: order }, dana),
  );
  await add(
    'list_orders',
    'Dana, default limit 5',
    dana,
    [
      ['SELECT * FROM orders', []],
      ['SELECT * FROM shipments', []],
    ],
    await shaped(tools, 'list_orders', {}, dana),
  );
  const trackingPage1 = await shaped(tools, 'get_tracking_events', { order_id: order, page: 1 }, dana);
  const tracking: string[] = [trackingPage1];
  for (const page of [2, 3]) tracking.push(await shaped(tools, 'get_tracking_events', { order_id: order, page }, dana));
  await add('get_tracking_events', `order ${order}, page 1`, dana, [['SELECT * FROM tracking_events WHERE order_id = $1', [order]]], trackingPage1);
  await add('get_tracking_events', `order ${order}, pages 1-3`, dana, [['SELECT * FROM tracking_events WHERE order_id = $1', [order]]], tracking);
  const ticketsPage1 = await shaped(tools, 'get_earlier_tickets', { page: 1 }, dana);
  const tickets: string[] = [ticketsPage1];
  for (const page of [2, 3]) tickets.push(await shaped(tools, 'get_earlier_tickets', { page }, dana));
  await add('get_earlier_tickets', 'Dana, page 1', dana, [['SELECT * FROM support_tickets', []]], ticketsPage1);
  await add('get_earlier_tickets', 'Dana, pages 1-3', dana, [['SELECT * FROM support_tickets', []]], tickets);
  await add(
    'get_payments',
    `order ${DEMO.orders.doubleCharge} (charged twice)`,
    marco,
    [
      ['SELECT * FROM payments WHERE order_id = $1', [DEMO.orders.doubleCharge]],
      ['SELECT * FROM refunds WHERE order_id = $1', [DEMO.orders.doubleCharge]],
    ],
    await shaped(tools, 'get_payments', { order_id: DEMO.orders.doubleCharge }, marco),
  );
  const policy = await shaped(tools, 'lookup_policy', { topic: 'parcel marked delivered but not received' }, dana);
  await add(
    'lookup_policy',
    '"parcel marked delivered but not received"',
    dana,
    [['SELECT * FROM policies WHERE topic = $1', [(JSON.parse(policy) as { topic: string }).topic]]],
    policy,
  );

  const request = await shaped(tools, 'request_refund', { order_id: order, amount_cents: 11_299, reason: 'Marked delivered 2.4 km away with no photo; never received.' }, dana);
  const requestId = (JSON.parse(request) as { request_id: string }).request_id;
  await add('request_refund', `order ${order}, full total`, dana, [['SELECT * FROM refund_requests WHERE request_id = $1', [requestId]]], request);
  await tools.recordRefundDecision({ customerId: dana, requestId, decision: 'approved', approver: 'measure-shaping', decidedAt: new Date().toISOString() });
  const issued = await shaped(tools, 'issue_refund', { request_id: requestId }, dana);
  await add(
    'issue_refund',
    'after a recorded approval',
    dana,
    [
      ['SELECT * FROM refunds WHERE request_id = $1', [requestId]],
      ['SELECT * FROM refund_decisions WHERE request_id = $1', [requestId]],
    ],
    issued,
  );
  return out;
}

function table(rows: Measurement[]): string[] {
  const head = ['tool', 'call', 'raw rows', 'raw tokens', 'shaped tokens', 'shaped / raw'];
  const body = rows.map((m) => [
    m.tool,
    m.call,
    String(m.rawRows),
    m.rawTokens.toLocaleString('en-US'),
    m.shapedTokens.toLocaleString('en-US'),
    `${((100 * m.shapedTokens) / m.rawTokens).toFixed(0)}%`,
  ]);
  const typical = ['get_order', 'get_tracking_events|pages', 'get_earlier_tickets|page 1', 'get_payments', 'lookup_policy'].map((key) => {
    const [tool, part] = key.split('|');
    return rows.find((m) => m.tool === tool && (!part || m.call.includes(part)))!;
  });
  const raw = typical.reduce((n, m) => n + m.rawTokens, 0);
  const small = typical.reduce((n, m) => n + m.shapedTokens, 0);
  body.push([
    '(one investigation)',
    'order + 3 tracking pages + tickets p1 + payments + policy',
    '',
    raw.toLocaleString('en-US'),
    small.toLocaleString('en-US'),
    `${((100 * small) / raw).toFixed(0)}%`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(' | ')} |`;
  return [line(head), `|${widths.map((w, i) => (i >= 2 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`, ...body.map(line)];
}

async function main(): Promise<void> {
  const db = await openDatabase({ ...loadConfig(), DATABASE_URL: undefined }, { dataDir: 'memory://' });
  try {
    await migrate(db.admin);
    await seedDemoData(db.admin);
    const rows = await measureAll(db);
    console.log('Result shaping on the seeded demo data (tokens estimated at ~4 characters each, src/context/tokens.ts):');
    console.log('');
    for (const line of table(rows)) console.log(line);
  } finally {
    await db.close();
  }
}

main().catch((error: Error) => {
  console.error(`measure-shaping failed: ${error.message}`);
  process.exit(1);
});
