import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../config';
import { UnavailableError } from '../../errors';
import type { McpOffer, McpOffers } from '../../schemas/mcp';
import { ToolError } from '../../schemas/tool-call';
import { offerOf, offersOf, type ListedTool } from './offers';
import type { McpServerSettings } from './settings';

// The MCP servers a worker talks to, through the official SDK: one client per server, connected
// at start (a declared tool the server lacks is a start error), reconnected after a transport
// failure, so a server that restarts is reached again by the next attempt.

/** What one call answered: the server's text and whether the tool said it failed. */
export interface McpCallResult {
  isError: boolean;
  text: string;
}

/** The worker's MCP servers: the offers fixed at start, and calls to them. */
export interface McpTools {
  offers: McpOffers;
  /** Calls a server's tool with these arguments; a transport failure is an UnavailableError (retried), a protocol refusal a ToolError. */
  call(offer: McpOffer, args: Record<string, unknown>): Promise<McpCallResult>;
  close(): Promise<void>;
}

/** How long connecting, listing and one call may take before the server counts as not answering. */
export const MCP_TIMEOUT_MS = 20_000;

const VERSION = '1';

function transportFor(server: McpServerSettings): Transport {
  const c = server.connect;
  if (c.transport === 'stdio') {
    return new StdioClientTransport({ command: c.command, args: c.args, env: { ...getDefaultEnvironment(), ...c.env }, ...(c.cwd ? { cwd: c.cwd } : {}) });
  }
  return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers } });
}

/** One server's client, opened on first use and again after a failure. */
class Connection {
  private client: Promise<Client> | undefined;

  constructor(readonly server: McpServerSettings) {}

  get(): Promise<Client> {
    this.client ??= this.open().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private async open(): Promise<Client> {
    const client = new Client({ name: 'casework', version: VERSION });
    await client.connect(transportFor(this.server), { timeout: MCP_TIMEOUT_MS });
    return client;
  }

  async reset(): Promise<void> {
    const open = this.client;
    this.client = undefined;
    const client = await open?.catch(() => undefined);
    await client?.close().catch(() => undefined);
  }
}

/** The text of a call's content: text blocks as they are, other blocks named, structured content when there is no text. */
export function resultText(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  if (result.content === undefined && result.toolResult !== undefined) return JSON.stringify(result.toolResult);
  const blocks = Array.isArray(result.content) ? (result.content as { type?: string; text?: unknown }[]) : [];
  const parts = blocks.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${b.type ?? 'unknown'} content left out]`));
  if (!blocks.some((b) => b.type === 'text') && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/** The protocol's codes for a connection that closed and a request that timed out: the server may be away, not refusing. */
const TRANSPORT_CODES: ReadonlySet<number> = new Set([Number(ErrorCode.ConnectionClosed), Number(ErrorCode.RequestTimeout)]);

/** True for a failure of the protocol's own (a bad request the server understood), false for the connection or a timeout. */
function isRefusal(error: unknown): error is McpError {
  return error instanceof McpError && !TRANSPORT_CODES.has(error.code);
}

async function listAll(client: Client): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: MCP_TIMEOUT_MS });
    tools.push(...(page.tools as ListedTool[]));
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * Connects to every configured server and builds the offers from what each lists. A server
 * that cannot be reached is an UnavailableError naming it (a starting worker waits it out); a
 * declared tool the server does not offer is a ConfigError naming it.
 */
export async function connectMcpServers(servers: readonly McpServerSettings[]): Promise<McpTools> {
  const connections = new Map(servers.map((s) => [s.name, new Connection(s)]));
  const closeAll = () => Promise.all([...connections.values()].map((c) => c.reset())).then(() => undefined);
  const offers: McpOffer[] = [];
  try {
    for (const server of servers) {
      let listed: ListedTool[];
      try {
        listed = await listAll(await connections.get(server.name)!.get());
      } catch (error) {
        throw new UnavailableError(`the MCP server "${server.name}" (CASEWORK_MCP_SERVERS) could not be reached: ${(error as Error).message}`);
      }
      for (const declared of server.tools) {
        const found = listed.find((t) => t.name === declared.tool);
        if (!found) {
          throw new ConfigError(
            `invalid configuration: CASEWORK_MCP_SERVERS: servers.${server.name}.tools.${declared.tool}: the server offers no tool "${declared.tool}" ` +
              `(it offers: ${listed.map((t) => t.name).join(', ') || 'none'})`,
          );
        }
        offers.push(offerOf(server.name, found, declared));
      }
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  return {
    offers: offersOf(offers),
    async call(offer, args) {
      const connection = connections.get(offer.server);
      if (!connection) throw new ToolError(`No MCP server "${offer.server}" is configured on this worker.`, 'bad_input');
      try {
        const client = await connection.get();
        const result = await client.callTool({ name: offer.tool, arguments: args }, undefined, { timeout: MCP_TIMEOUT_MS });
        return { isError: result.isError === true, text: resultText(result) };
      } catch (error) {
        if (isRefusal(error)) throw new ToolError(`The ${offer.name} tool refused the call: ${error.message}`, 'bad_input');
        // The connection may be broken (the server restarted, the process died): the next attempt opens a new one.
        await connection.reset();
        throw new UnavailableError(`the MCP server "${offer.server}" did not answer: ${(error as Error).message}`);
      }
    },
    close: closeAll,
  };
}
