import type { Tool } from '@anthropic-ai/sdk/resources/messages';

// The tools of configured MCP servers as casework offers them to the model (docs/mcp.md). Pure
// types: the worker builds the offers at start, the workflow records them once per run.

/** How a configured MCP tool may be used: read freely, or called only on a person's recorded approval. */
export type McpToolKind = 'read-only' | 'money-moving';

/** One MCP tool as offered to the model: its namespaced name, the server's description and input schema, and its kind. */
export interface McpOffer {
  /** The name the model calls, `mcp_<server>_<tool>`. */
  name: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  kind: McpToolKind;
  /** The definition the model reads (description and JSON schema from the server, as casework adjusted them). */
  definition: Tool;
  /** The argument the server takes an idempotency key in; casework fills it, derived from the approval. */
  idempotencyKeyArgument?: string;
  /** The argument holding the amount in minor units, so approvers' limits apply. */
  amountArgument?: string;
  /** The argument casework adds to page a long list in the result (absent when the server's schema already uses the name). */
  pageArgument?: string;
}

/** Every MCP tool a run offers, fixed at its start, and a digest the model activity checks its own offers against. */
export interface McpOffers {
  tools: McpOffer[];
  digest: string;
}

/** A money-moving MCP call waiting for, or given, a person's decision (it rides on the refund approval machinery). */
export interface McpPendingCall {
  /** The offered name, `mcp_<server>_<tool>`. */
  tool: string;
  arguments: Record<string, unknown>;
}
