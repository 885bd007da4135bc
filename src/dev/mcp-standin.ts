import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

// A test double of a shop's MCP server (docs/mcp.md), built with the official MCP SDK and
// reachable over stdio and streamable HTTP as the protocol specifies: one read-only tool,
// `lookup_warranty`, and one money-moving tool, `issue_store_credit`, which takes an
// idempotency key the way payment APIs do (the same key and arguments answer the first credit
// again; the same key with other arguments is refused; without a key every call issues one). It counts every invocation and every
// credit actually issued, and `standin_counts` reports them: a tool no configuration declares,
// so casework never offers it to the model. Nothing leaves the machine.

/** What the stand-in has seen: every call of issue_store_credit, and the credits it issued (one per idempotency key). */
export interface McpStandinState {
  invocations: number;
  credits: { credit_id: string; idempotency_key: string | null; order_id: string; amount_cents: number; reason: string }[];
  lookups: number;
}

/** Orders the warranty register knows: a short record, one with a long claim history, one with very long terms. */
function warranty(orderId: string): Record<string, unknown> | undefined {
  const base = { order_id: orderId, plan: 'Trailpeak 2-year cover', covered_until: '2027-03-01' };
  if (orderId === '5102') return { ...base, claims: [{ claim_id: 'wc_1', opened: '2025-11-02', outcome: 'sole replaced' }], terms: 'Covers defects in materials and workmanship.' };
  if (orderId === '7000') {
    const claims = Array.from({ length: 45 }, (_, i) => ({
      claim_id: `wc_${1000 + i}`,
      opened: `2025-${String((i % 12) + 1).padStart(2, '0')}-0${(i % 9) + 1}`,
      outcome: i % 3 ? 'repaired' : 'replaced',
    }));
    return { ...base, claims, terms: 'Covers defects in materials and workmanship.' };
  }
  if (orderId === '7001') return { ...base, claims: [], terms: 'Clause. '.repeat(2_500) };
  return undefined;
}

const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: typeof value === 'string' ? value : JSON.stringify(value) }] });
const failure = (message: string) => ({ ...text(message), isError: true });

/** A new MCP server over the shared state (the HTTP transport builds one per request, as the SDK's stateless mode does). */
export function createMcpStandinServer(state: McpStandinState): McpServer {
  const server = new McpServer({ name: 'casework-shop-standin', version: '1.0.0' });
  server.registerTool(
    'lookup_warranty',
    {
      description: 'The warranty on an order: the plan, until when it covers, its terms, and every claim made under it (newest last).',
      inputSchema: { order_id: z.string().min(1).describe('The order number, e.g. "5102".') },
    },
    ({ order_id }) => {
      state.lookups += 1;
      const found = warranty(order_id);
      return found ? text(found) : failure(`No warranty on record for order ${order_id}.`);
    },
  );
  server.registerTool(
    'issue_store_credit',
    {
      description: 'Issue store credit to the customer of an order.',
      inputSchema: {
        order_id: z.string().min(1),
        amount_cents: z.number().int().positive().describe('Credit in cents.'),
        reason: z.string().min(3),
        idempotency_key: z
          .string()
          .min(8)
          .optional()
          .describe('Repeating a call with the same key and arguments returns the first credit instead of issuing another. Without a key, every call issues a credit.'),
      },
    },
    ({ order_id, amount_cents, reason, idempotency_key }) => {
      state.invocations += 1;
      const earlier = idempotency_key === undefined ? undefined : state.credits.find((c) => c.idempotency_key === idempotency_key);
      if (earlier) {
        if (earlier.order_id !== order_id || earlier.amount_cents !== amount_cents || earlier.reason !== reason) {
          return failure(`Idempotency key ${idempotency_key} was already used with other arguments; nothing was issued.`);
        }
        return text({ ...earlier, status: 'issued', replayed: true });
      }
      const credit = { credit_id: `sc_${state.credits.length + 1}`, idempotency_key: idempotency_key ?? null, order_id, amount_cents, reason };
      state.credits.push(credit);
      return text({ ...credit, status: 'issued' });
    },
  );
  server.registerTool('standin_counts', { description: "The stand-in's own counters (for tests)." }, () =>
    text({ invocations: state.invocations, credits: state.credits.length, lookups: state.lookups }),
  );
  return server;
}

/** A fresh, empty state. */
export function newStandinState(): McpStandinState {
  return { invocations: 0, credits: [], lookups: 0 };
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  return raw ? (JSON.parse(raw) as unknown) : undefined;
}

/** The stand-in over streamable HTTP on loopback. */
export interface McpStandinHttp {
  url: string;
  state: McpStandinState;
  close(): Promise<void>;
}

/** Serves the stand-in over streamable HTTP at `/mcp` (stateless: a server and transport per request), on `port` (0: any free one). */
export async function startMcpStandinHttp(options: { port?: number; state?: McpStandinState } = {}): Promise<McpStandinHttp> {
  const state = options.state ?? newStandinState();
  const http: Server = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== 'POST') {
      // Stateless: no server-initiated stream and no session to delete, as the SDK's stateless example answers.
      res
        .writeHead(405, { 'content-type': 'application/json', allow: 'POST' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
      return;
    }
    void (async () => {
      const server = createMcpStandinServer(state);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        const parsed = await body(req);
        await server.connect(transport);
        await transport.handleRequest(req, res, parsed);
      } catch {
        if (!res.headersSent)
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
      }
    })();
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Serves the stand-in on stdin/stdout until the input closes. */
export async function runMcpStandinStdio(): Promise<void> {
  await createMcpStandinServer(newStandinState()).connect(new StdioServerTransport());
}

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args.includes('--stdio')) {
    void runMcpStandinStdio();
  } else {
    const at = args.indexOf('--port');
    void startMcpStandinHttp({ port: at >= 0 ? Number(args[at + 1]) : 8931 }).then((s) =>
      console.error(`MCP stand-in (test double) on ${s.url}; --stdio to speak on stdin/stdout`),
    );
  }
}
