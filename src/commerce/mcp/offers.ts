import { createHash } from 'node:crypto';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import type { McpOffer, McpOffers } from '../../schemas/mcp';
import { offeredName, type DeclaredTool } from './settings';

// How a declared MCP tool is offered to the model: namespaced, with the server's description and
// input schema, adjusted where casework does part of the work (it fills the idempotency key; it
// pages long lists). Pure and sorted, so every worker with the same configuration and servers
// offers byte-identical definitions, and the prompt cache keeps them.

/** A tool as the server lists it (the fields casework reads). */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };
}

/** The argument casework adds to a read-only tool to page a long list in its result. */
export const PAGE_ARGUMENT = 'result_page';

/** What a money-moving tool's description says, so the model knows a person decides first. */
export const MONEY_MOVING_NOTE =
  'Moves money: calling it asks a person to approve this exact call, and it runs only once approved; you are told the result in a later message. Never tell the customer it is done before then.';

function schemaFor(listed: ListedTool, declared: DeclaredTool): { schema: Tool['input_schema']; pageArgument?: string } {
  const properties: Record<string, unknown> = { ...(listed.inputSchema.properties ?? {}) };
  let required = [...(listed.inputSchema.required ?? [])];
  if (declared.idempotencyKeyArgument) {
    delete properties[declared.idempotencyKeyArgument];
    required = required.filter((r) => r !== declared.idempotencyKeyArgument);
  }
  let pageArgument: string | undefined;
  if (declared.kind === 'read-only' && !(PAGE_ARGUMENT in properties)) {
    pageArgument = PAGE_ARGUMENT;
    properties[PAGE_ARGUMENT] = {
      type: 'integer',
      minimum: 1,
      description: 'Page of a long list in the result, starting at 1 (casework pages long lists; the result says which page it shows).',
    };
  }
  const { $schema: _drop, ...rest } = listed.inputSchema;
  const schema = { ...rest, type: 'object' as const, properties, ...(required.length ? { required } : {}) };
  if (!required.length) delete (schema as { required?: unknown }).required;
  return { schema, ...(pageArgument ? { pageArgument } : {}) };
}

/** The offer of one declared tool the server lists. */
export function offerOf(server: string, listed: ListedTool, declared: DeclaredTool): McpOffer {
  const name = offeredName(server, declared.tool);
  const { schema, pageArgument } = schemaFor(listed, declared);
  const said = (listed.description ?? '').trim() || `The ${declared.tool} tool of the ${server} MCP server.`;
  const description = declared.kind === 'money-moving' ? `${said}\n\n${MONEY_MOVING_NOTE}` : said;
  return {
    name,
    server,
    tool: declared.tool,
    kind: declared.kind,
    definition: { name, description, input_schema: schema },
    ...(declared.idempotencyKeyArgument ? { idempotencyKeyArgument: declared.idempotencyKeyArgument } : {}),
    ...(declared.amountArgument ? { amountArgument: declared.amountArgument } : {}),
    ...(pageArgument ? { pageArgument } : {}),
  };
}

/** Every offer, sorted by name, with the digest of what the model will read. */
export function offersOf(offers: readonly McpOffer[]): McpOffers {
  const tools = [...offers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const digest = createHash('sha256').update(JSON.stringify(tools)).digest('hex').slice(0, 16);
  return { tools, digest };
}
