import type { Config } from '../../config';
import { connectMcpServers, type McpTools } from '../../commerce/mcp/client';
import { mcpServerSettings } from '../../commerce/mcp/settings';
import { startMcpStandinHttp, type McpStandinHttp } from '../mcp-standin';

// `npm run demo -- --shop stand-in`: the shop's own MCP server, played by the MCP stand-in (a test
// double, src/dev/mcp-standin.ts) over streamable HTTP, declared as configuration declares a real
// one: `lookup_warranty` read-only, `issue_store_credit` money-moving (called only after a
// person approves it, with an idempotency key casework fills).

/** The stand-in, its declaration (CASEWORK_MCP_SERVERS) and the worker's connection to it. */
export interface StandinMcp {
  standin: McpStandinHttp;
  config: Partial<Config>;
  tools: McpTools;
  close(): Promise<void>;
}

/** Starts the stand-in and connects to it as a worker does at start. */
export async function startStandinMcp(): Promise<StandinMcp> {
  const standin = await startMcpStandinHttp();
  const declared = JSON.stringify({
    servers: {
      shop: {
        transport: 'http',
        url: standin.url,
        tools: {
          lookup_warranty: 'read-only',
          issue_store_credit: { kind: 'money-moving', idempotencyKeyArgument: 'idempotency_key', amountArgument: 'amount_cents' },
        },
      },
    },
  });
  const config: Partial<Config> = { CASEWORK_MCP_SERVERS: declared };
  try {
    const tools = await connectMcpServers(mcpServerSettings(config));
    return {
      standin,
      config,
      tools,
      async close() {
        await tools.close();
        await standin.close();
      },
    };
  } catch (error) {
    await standin.close();
    throw error;
  }
}
