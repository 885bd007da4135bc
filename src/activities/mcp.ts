import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import type { Pool } from 'pg';
import type { McpTools } from '../commerce/mcp/client';
import { capResult } from '../context/result-cap';
import { withCustomer } from '../db/pool';
import {
  finishMcpCall,
  insertMcpDecision,
  insertMcpRequest,
  lockMcpCall,
  markMcpRequestDecided,
  mcpDecisionFor,
  mcpRequestById,
  retryMcpCall,
  setMcpRequestStatus,
  startMcpCall,
  type McpCallRow,
} from '../db/mcp-calls';
import { BadInputError } from '../errors';
import { describeIssues } from '../schemas/issues';
import type { McpOffer, McpOffers } from '../schemas/mcp';
import { ToolError, type ToolCall, type ToolOutcome } from '../schemas/tool-call';
import { failuresForTemporal } from './failures';
import { shapeMcpResult } from './tools/mcp-shape';
import { RefundDecisionInput, stableId } from './tools/refunds';

// The MCP tools' activities (docs/mcp.md). A read-only tool is called and its result shaped like
// every other tool's. A money-moving tool is called only by the workflow, on a person's approval
// that this activity reads back from Postgres before anything is sent, and at most once per
// approval: the call is recorded before the server is asked and completed after it answers; a
// retry that finds it in flight repeats it only with the same idempotency key (the server then
// answers the first call's result), and otherwise reports it unknown, for a person to check.

/** What the MCP activities need: the pool for the call trail, and the worker's servers (unset: none configured). */
export interface McpActivityDeps {
  pool: Pool;
  mcp?: McpTools;
}

/** A call of an MCP tool; a money-moving one names the approved request it carries out. */
export type McpToolCall = ToolCall & { approval?: { requestId: string } };

/** How a money-moving call ended, beside what the model reads. */
export type McpCallOutcome = ToolOutcome & { call?: 'succeeded' | 'failed' | 'unknown' };

/** What requestMcpCall filed for a person to decide, or why it filed nothing. */
export type McpFiling = { filed: { request_id: string; tool: string; arguments: Record<string, unknown>; amount_cents: number | null } } | { refused: string };

const NONE: McpOffers = { tools: [], digest: '' };

function need(deps: McpActivityDeps): McpTools {
  if (!deps.mcp) throw new BadInputError('this worker has no MCP servers (CASEWORK_MCP_SERVERS is unset): it cannot run MCP tools');
  return deps.mcp;
}

function offerNamed(mcp: McpTools, name: string): McpOffer {
  const offer = mcp.offers.tools.find((t) => t.name === name);
  if (!offer) throw new ToolError(`No MCP tool ${name} is configured on this worker.`, 'bad_input');
  return offer;
}

function argumentsOf(offer: McpOffer, input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new ToolError(`Invalid input for ${offer.name}: the arguments must be an object.`, 'bad_input');
  return { ...(input as Record<string, unknown>) };
}

/**
 * The definitions of the offers a run recorded, as this worker has them: the model activity
 * sends these. A worker whose servers or configuration offer something else (its digest
 * differs) refuses, naming both, rather than send the model tools the run did not record.
 */
export function offeredDefinitions(mcp: McpTools | undefined, digest: string): Tool[] {
  const offers = mcp?.offers ?? NONE;
  if (offers.digest !== digest) {
    throw new BadInputError(
      `this run offers the MCP tools of digest ${digest}, and this worker's MCP servers offer ${offers.digest || 'none'}: check CASEWORK_MCP_SERVERS on every worker`,
    );
  }
  return offers.tools.map((t) => t.definition);
}

/** What a recorded call tells the workflow and the model. */
function outcomeOf(offer: McpOffer, row: McpCallRow): McpCallOutcome {
  const result = row.result ?? '';
  if (row.outcome === 'succeeded') return { is_error: false, content: result, call: 'succeeded' };
  if (row.outcome === 'failed') return { is_error: true, content: `The ${offer.name} call was made once and the server answered with an error: ${result}`, call: 'failed' };
  return { is_error: true, content: result, call: 'unknown' };
}

/** Why a call found in flight cannot be repeated. */
const unknownText = (offer: McpOffer) =>
  `An earlier attempt at this ${offer.name} call was cut off after it may have reached the ${offer.server} server, and the tool takes no idempotency key, ` +
  'so casework will not repeat it: a person must check with the server whether it happened.';

/** The money-moving call of an approved request: recorded before, made at most once per approval, recorded after. */
async function callOnApproval(deps: McpActivityDeps, mcp: McpTools, offer: McpOffer, call: McpToolCall, requestId: string): Promise<McpCallOutcome> {
  const { customerId } = call.context;
  type Step = { done: McpCallRow } | { approvalId: string; idempotencyKey: string; args: Record<string, unknown> };
  const step = await withCustomer(deps.pool, customerId, async (client): Promise<Step> => {
    const request = await mcpRequestById(client, customerId, requestId);
    if (!request || request.tool !== offer.name) throw new ToolError(`No ${offer.name} request ${requestId} on this customer's account.`, 'not_found');
    const decision = await mcpDecisionFor(client, customerId, requestId);
    if (!decision) throw new ToolError(`Request ${requestId} has no recorded approval: it is still awaiting a person's decision, so ${offer.name} was not called.`);
    if (decision.decision !== 'approved' || !decision.approval_id) {
      throw new ToolError(`Request ${requestId} was denied by ${decision.approver}${decision.reason ? ` (${decision.reason})` : ''}, so ${offer.name} was not called.`);
    }
    const approvalId = decision.approval_id;
    const earlier = await lockMcpCall(client, customerId, approvalId);
    if (earlier && earlier.outcome !== null) return { done: earlier };
    if (earlier && !offer.idempotencyKeyArgument) {
      await setMcpRequestStatus(client, customerId, requestId, 'unknown');
      return { done: await finishMcpCall(client, customerId, approvalId, 'unknown', unknownText(offer)) };
    }
    const idempotencyKey = earlier?.idempotency_key ?? stableId('mcpkey', approvalId);
    if (earlier) await retryMcpCall(client, customerId, approvalId);
    else await startMcpCall(client, { approvalId, customerId, requestId, idempotencyKey });
    return { approvalId, idempotencyKey, args: request.arguments };
  });
  if ('done' in step) return outcomeOf(offer, step.done);
  const args = { ...step.args, ...(offer.idempotencyKeyArgument ? { [offer.idempotencyKeyArgument]: step.idempotencyKey } : {}) };
  let answer: { isError: boolean; text: string };
  try {
    answer = await mcp.call(offer, args);
  } catch (error) {
    // The server refused the request itself (bad arguments): nothing happened, and repeating it would not change that.
    if (!(error instanceof ToolError)) throw error;
    answer = { isError: true, text: error.message };
  }
  const row = await withCustomer(deps.pool, customerId, async (client) => {
    const finished = await finishMcpCall(client, customerId, step.approvalId, answer.isError ? 'failed' : 'succeeded', capResult(answer.text));
    await setMcpRequestStatus(client, customerId, requestId, finished.outcome === 'succeeded' ? 'called' : (finished.outcome ?? 'failed'));
    return finished;
  });
  return outcomeOf(offer, row);
}

/** A read-only call: the arguments without casework's page argument, the result paged and capped. */
async function callReadOnly(mcp: McpTools, offer: McpOffer, input: unknown): Promise<ToolOutcome> {
  const args = argumentsOf(offer, input);
  let page = 1;
  if (offer.pageArgument && args[offer.pageArgument] !== undefined) {
    const asked = args[offer.pageArgument];
    if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1)
      throw new ToolError(`Invalid input for ${offer.name}: ${offer.pageArgument} must be a whole number from 1.`, 'bad_input');
    page = asked;
    delete args[offer.pageArgument];
  }
  const answer = await mcp.call(offer, args);
  if (answer.isError) return { is_error: true, content: capResult(`The ${offer.name} tool answered with an error: ${answer.text}`) };
  return { is_error: false, content: shapeMcpResult(answer.text, page) };
}

/** The MCP activities: the offers, a call, and the request and decision of a money-moving call. */
export function createMcpActivities(deps: McpActivityDeps) {
  return failuresForTemporal({
    /** The MCP tools this worker offers, recorded by a run once at its start. */
    async offeredMcpTools(): Promise<McpOffers> {
      return deps.mcp?.offers ?? NONE;
    },

    /**
     * Calls an MCP tool. Read-only: at once. Money-moving: only with `approval`, on a recorded
     * approval, at most once per approval; without one it is refused and nothing is sent.
     */
    async callMcpTool(call: McpToolCall): Promise<McpCallOutcome> {
      const mcp = need(deps);
      try {
        const offer = offerNamed(mcp, call.name);
        if (offer.kind === 'read-only') return await callReadOnly(mcp, offer, call.input);
        if (!call.approval) {
          throw new ToolError(`${offer.name} moves money, so it is called only on a person's recorded approval of the exact call; it was not called.`);
        }
        return await callOnApproval(deps, mcp, offer, call, call.approval.requestId);
      } catch (error) {
        if (error instanceof ToolError) return { is_error: true, content: error.message };
        throw error;
      }
    },

    /** Files a money-moving call for a person to decide; a retry of the same model call finds the same request. Calls nothing. */
    async requestMcpCall(call: ToolCall): Promise<McpFiling> {
      const mcp = need(deps);
      try {
        const offer = offerNamed(mcp, call.name);
        if (offer.kind !== 'money-moving') throw new ToolError(`${offer.name} is read-only: it needs no approval.`, 'bad_input');
        const args = argumentsOf(offer, call.input);
        // The key is casework's to give, derived from the approval; whatever the model put there is dropped.
        if (offer.idempotencyKeyArgument) delete args[offer.idempotencyKeyArgument];
        let amount: number | null = null;
        if (offer.amountArgument) {
          const value = args[offer.amountArgument];
          if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
            throw new ToolError(`Invalid input for ${offer.name}: ${offer.amountArgument} must be a whole number of minor units (cents), 0 or more.`, 'bad_input');
          }
          amount = value;
        }
        const { context } = call;
        const row = await withCustomer(deps.pool, context.customerId, (client) =>
          insertMcpRequest(client, {
            requestId: stableId('mcpreq', context.workflowId, context.toolUseId),
            customerId: context.customerId,
            workflowId: context.workflowId,
            toolUseId: context.toolUseId,
            tool: offer.name,
            server: offer.server,
            serverTool: offer.tool,
            args,
            amountCents: amount,
          }),
        );
        return { filed: { request_id: row.request_id, tool: row.tool, arguments: row.arguments, amount_cents: row.amount_cents } };
      } catch (error) {
        if (error instanceof ToolError) return { refused: error.message };
        throw error;
      }
    },

    /** Records the first decision on a money-moving request; a retry, or a second decision, returns the one on record. */
    async recordMcpDecision(input: RefundDecisionInput): Promise<{ approvalId: string | null }> {
      const parsed = RefundDecisionInput.safeParse(input);
      if (!parsed.success) throw new BadInputError(`invalid decision: ${describeIssues(parsed.error)}`);
      const d = parsed.data;
      return withCustomer(deps.pool, d.customerId, async (client) => {
        if (!(await mcpRequestById(client, d.customerId, d.requestId))) throw new BadInputError(`No MCP call request ${d.requestId} for customer ${d.customerId}.`);
        const recorded = await insertMcpDecision(client, {
          requestId: d.requestId,
          customerId: d.customerId,
          decision: d.decision,
          approver: d.approver,
          decidedBy: d.decidedBy ?? d.approver,
          decidedVia: d.decidedVia ?? null,
          reason: d.reason ?? null,
          decidedAt: d.decidedAt,
          approvalId: d.decision === 'approved' ? stableId('mcpapr', d.requestId) : null,
        });
        await markMcpRequestDecided(client, d.customerId, d.requestId, recorded.decision);
        return { approvalId: recorded.approval_id };
      });
    },
  });
}
