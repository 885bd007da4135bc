import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, type Config } from '../../config';
import { describeIssues } from '../../schemas/issues';
import type { McpToolKind } from '../../schemas/mcp';

// CASEWORK_MCP_SERVERS: which MCP servers casework connects to and, per tool, whether it only
// reads or moves money (docs/mcp.md). A tool a server offers that is not declared here is never
// offered to the model: declaring is the team's decision that the tool is safe to hand over.

const VARIABLE = 'CASEWORK_MCP_SERVERS';

/** The longest tool name the Messages API accepts. */
export const MAX_TOOL_NAME = 64;

const argumentName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be an argument name of the tool');

const ToolDeclaration = z.union([
  z.enum(['read-only', 'money-moving']),
  z.strictObject({
    kind: z.enum(['read-only', 'money-moving']),
    /** The argument the server takes an idempotency key in; casework fills it with one derived from the approval. */
    idempotencyKeyArgument: argumentName.optional(),
    /** The argument holding the amount in minor units (cents), so approvers' limits apply. */
    amountArgument: argumentName.optional(),
  }),
]);

const tools = z.record(z.string(), ToolDeclaration).refine((t) => Object.keys(t).length > 0, 'declare at least one tool, each "read-only" or "money-moving"');

/** Header values read from environment variables, so a token need not sit in the file. */
const headersFromEnv = z.record(z.string().min(1), z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable'));

const Server = z.discriminatedUnion('transport', [
  z.strictObject({
    transport: z.literal('stdio'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    tools,
  }),
  z.strictObject({
    transport: z.literal('http'),
    url: z.string().refine((v) => /^https?:\/\/[^\s]+$/.test(v) && URL.canParse(v), 'must be an http:// or https:// URL'),
    headers: z.record(z.string().min(1), z.string()).optional(),
    headersFromEnv: headersFromEnv.optional(),
    tools,
  }),
]);

const ServersFile = z.strictObject({
  servers: z.record(z.string(), Server),
});

// Checked by hand, not by the record's key schema: zod reports a bad key only as "Invalid key in record".
const SERVER_NAME = /^[a-z][a-z0-9_]{0,19}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** One tool as configuration declares it. */
export interface DeclaredTool {
  tool: string;
  kind: McpToolKind;
  idempotencyKeyArgument?: string;
  amountArgument?: string;
}

/** How to reach one server: a command speaking MCP on stdin/stdout, or a streamable HTTP endpoint. */
export type McpTransportSettings =
  { transport: 'stdio'; command: string; args: string[]; env?: Record<string, string>; cwd?: string } | { transport: 'http'; url: string; headers: Record<string, string> };

/** One configured server: its name, how to reach it, and its declared tools. */
export interface McpServerSettings {
  name: string;
  connect: McpTransportSettings;
  tools: DeclaredTool[];
}

/** The name the model calls a server's tool by. */
export function offeredName(server: string, tool: string): string {
  return `mcp_${server}_${tool}`;
}

/** The text of CASEWORK_MCP_SERVERS: inline JSON when it starts with "{", else the path of a JSON file. */
function readSpec(value: string): string {
  if (value.trimStart().startsWith('{')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${VARIABLE}: cannot read the file ${value} (${(error as Error).message})`);
  }
}

/**
 * The MCP servers configuration names, validated: a bad or half-given entry is a ConfigError
 * (exit 2) naming the variable and the field. Unset: no servers.
 */
export function mcpServerSettings(config: Pick<Config, 'CASEWORK_MCP_SERVERS'>, env: NodeJS.ProcessEnv = process.env): McpServerSettings[] {
  const value = config.CASEWORK_MCP_SERVERS;
  if (!value?.trim()) return [];
  let json: unknown;
  try {
    json = JSON.parse(readSpec(value));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`invalid configuration: ${VARIABLE}: not JSON (${(error as Error).message})`);
  }
  const parsed = ServersFile.safeParse(json);
  if (!parsed.success) throw new ConfigError(`invalid configuration: ${VARIABLE}: ${describeIssues(parsed.error, '(the whole file)')}`);
  return Object.entries(parsed.data.servers).map(([name, server]) => {
    if (!SERVER_NAME.test(name)) throw new ConfigError(`invalid configuration: ${VARIABLE}: servers.${name}: server names are lower-case letters, digits and "_", at most 20`);
    const declared = Object.entries(server.tools).map(([tool, d]): DeclaredTool => {
      if (!TOOL_NAME.test(tool)) throw new ConfigError(`invalid configuration: ${VARIABLE}: servers.${name}.tools.${tool}: tool names are letters, digits, "_" and "-"`);
      const long = offeredName(name, tool);
      if (long.length > MAX_TOOL_NAME) {
        throw new ConfigError(`invalid configuration: ${VARIABLE}: servers.${name}.tools.${tool}: the offered name ${long} is longer than ${MAX_TOOL_NAME} characters`);
      }
      if (typeof d === 'string') return { tool, kind: d };
      if (d.kind === 'read-only' && (d.idempotencyKeyArgument || d.amountArgument)) {
        throw new ConfigError(`invalid configuration: ${VARIABLE}: servers.${name}.tools.${tool}: idempotencyKeyArgument and amountArgument are for money-moving tools only`);
      }
      return {
        tool,
        kind: d.kind,
        ...(d.idempotencyKeyArgument ? { idempotencyKeyArgument: d.idempotencyKeyArgument } : {}),
        ...(d.amountArgument ? { amountArgument: d.amountArgument } : {}),
      };
    });
    if (server.transport === 'stdio') {
      const { command, args, env: childEnv, cwd } = server;
      return { name, connect: { transport: 'stdio', command, args, ...(childEnv ? { env: childEnv } : {}), ...(cwd ? { cwd } : {}) }, tools: declared };
    }
    const headers: Record<string, string> = { ...server.headers };
    for (const [header, variable] of Object.entries(server.headersFromEnv ?? {})) {
      const secret = env[variable];
      if (!secret) throw new ConfigError(`invalid configuration: ${VARIABLE}: servers.${name}.headersFromEnv.${header} names ${variable}, which is not set`);
      headers[header] = secret;
    }
    return { name, connect: { transport: 'http', url: server.url, headers }, tools: declared };
  });
}
