import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ContentBlock, ContentBlockParam, MessageParam, StopReason, TextBlock, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { Model } from '../../src/model/port';
import type { ModelPurpose, ModelReply, ModelRequest, TokenUsage } from '../../src/schemas/model';

// A scripted fake of the model port (a test double: the real model cannot run here). Each test
// registers, per workflow id, the replies the model gives, in order; the fake answers exactly
// those, records every request it was sent, and refuses any request the Messages API would
// refuse, so a test fails on an invalid transcript instead of passing on a lenient double.

/** A reply as a script gives it: usage may be left out, then it is estimated from the request. */
export interface ScriptedReply {
  content: ContentBlock[];
  stop_reason: StopReason | null;
  usage?: TokenUsage;
}

/** One entry of a script: a fixed reply, or a function of the request (e.g. to echo a request_id). */
export type ScriptStep = ScriptedReply | ((request: ModelRequest) => ScriptedReply);

/** A workflow's script: the investigate replies in order, and answers for other purposes. */
export interface Script {
  replies: ScriptStep[];
  /** Answers requests of these purposes (compaction, bulk reads) without using up `replies`. */
  purposes?: Partial<Record<ModelPurpose, (request: ModelRequest) => ScriptedReply>>;
}

/** The scripted model: register scripts, then read what each workflow sent. */
export interface ScriptedModel extends Model {
  /** Registers the script for `workflowId` (investigation-<ticketId>); replaces any earlier one. */
  script(workflowId: string, script: Script | ScriptStep[]): void;
  /** Deep copies of every request `workflowId` sent, in order, optionally of one purpose. */
  requests(workflowId: string, purpose?: ModelPurpose): ModelRequest[];
  /** Every reply served to `workflowId`, in order, with the usage it carried. */
  replies(workflowId: string): ModelReply[];
  /** How many investigate replies of `workflowId`'s script are still unused. */
  remaining(workflowId: string): number;
  /** The errors the fake raised for `workflowId` (invalid request, script exhausted), newest last. */
  failures(workflowId: string): string[];
}

let seq = 0;

/** A text block. */
export function text(value: string): TextBlock {
  return { type: 'text', text: value, citations: null };
}

/** A tool_use block with a fresh id unless one is given. */
export function toolUse(name: string, input: Record<string, unknown>, id = `toolu_s${process.pid}_${++seq}`): ToolUseBlock {
  return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
}

/** A thinking block (extended thinking), with a made-up signature. */
export function thinking(value: string): ContentBlock {
  return { type: 'thinking', thinking: value, signature: `sig_${++seq}` };
}

/**
 * A reply of these blocks. The stop reason is `tool_use` when a block is a tool_use, else
 * `end_turn`, unless given; usage is estimated at serve time unless given.
 */
export function reply(content: ContentBlock[], options: { stop_reason?: StopReason | null; usage?: TokenUsage } = {}): ScriptedReply {
  const stop = options.stop_reason !== undefined ? options.stop_reason : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  return { content, stop_reason: stop, ...(options.usage ? { usage: options.usage } : {}) };
}

/** A reply that only calls tools: `calls(toolUse(…), toolUse(…))`. */
export function calls(...uses: ToolUseBlock[]): ScriptedReply {
  return reply(uses);
}

/** A final answer to the customer. */
export function answer(value: string): ScriptedReply {
  return reply([text(value)]);
}

/** A structured-output reply (compaction): the object as JSON text. */
export function json(value: unknown): ScriptedReply {
  return reply([text(JSON.stringify(value))]);
}

// About four characters a token, as a real tokenizer roughly gives for English and JSON; the
// first call of a run writes the cache, later ones read most of the prefix from it.
function estimatedUsage(request: ModelRequest, content: ContentBlock[], served: number): TokenUsage {
  const prompt = Math.ceil(JSON.stringify({ s: request.system, t: request.tools, m: request.messages }).length / 4);
  const output = Math.max(1, Math.ceil(JSON.stringify(content).length / 4));
  if (served === 0) return { input_tokens: Math.min(prompt, 40), output_tokens: output, cache_creation_input_tokens: Math.max(0, prompt - 40), cache_read_input_tokens: 0 };
  const cached = Math.floor(prompt * 0.8);
  return { input_tokens: prompt - cached, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: cached };
}

/** The error the API answers an invalid request with: a 400, never worth retrying. */
function invalidRequest(workflowId: string, call: number, problem: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'invalid_request_error',
    nonRetryable: true,
    message: `400 invalid_request_error (scripted model, ${workflowId}, call ${call}): ${problem}`,
  });
}

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function hasCacheControl(x: object): boolean {
  return Boolean((x as { cache_control?: unknown }).cache_control);
}

/**
 * Why the Messages API would refuse this request, or null when it would accept it: roles
 * alternate starting with the user; no empty content or text; every tool_use is answered by a
 * tool_result with its id in the very next user message, results first, and no result answers
 * a call that was not made; tool_use ids are unique; at most four cache_control breakpoints,
 * 1h entries before 5m ones.
 */
export function requestProblem(request: ModelRequest): string | null {
  const { messages } = request;
  if (!Number.isInteger(request.max_tokens) || request.max_tokens < 1) return `max_tokens: must be a positive integer, got ${request.max_tokens}`;
  if (!messages.length) return 'messages: at least one message is required';
  for (const [i, block] of request.system.entries()) {
    if (block.type !== 'text' || !block.text) return `system.${i}: text content blocks must be non-empty`;
  }
  const seen = new Set<string>();
  for (const [i, message] of messages.entries()) {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expected) return `messages.${i}: roles must alternate starting with "user"; got "${message.role}" where "${expected}" belongs`;
    if (typeof message.content === 'string' ? !message.content : !message.content.length) return `messages.${i}: all messages must have non-empty content`;
    const blocks = blocksOf(message);
    for (const [j, block] of blocks.entries()) {
      if (block.type === 'text' && !block.text) return `messages.${i}.content.${j}: text content blocks must be non-empty`;
      if (block.type === 'tool_use') {
        if (message.role !== 'assistant') return `messages.${i}.content.${j}: tool_use blocks may only appear in assistant messages`;
        if (seen.has(block.id)) return `messages.${i}.content.${j}: tool_use ids must be unique; ${block.id} appears twice`;
        seen.add(block.id);
      }
      if (block.type === 'tool_result' && message.role !== 'user') return `messages.${i}.content.${j}: tool_result blocks may only appear in user messages`;
    }
    const asked = message.role === 'assistant' ? blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
    const next = messages[i + 1];
    if (asked.length) {
      if (!next) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${asked.join(', ')}`;
      const answered = blocksOf(next)
        .slice(0, asked.length)
        .map((b) => (b.type === 'tool_result' ? b.tool_use_id : null));
      const missing = asked.filter((id) => !answered.includes(id));
      if (missing.length) {
        return `messages.${i + 1}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}. Each tool_use block must have a corresponding tool_result block in the next message, before any other content`;
      }
    }
    if (message.role === 'user') {
      const previous = i > 0 ? blocksOf(messages[i - 1]!).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
      for (const [j, block] of blocksOf(message).entries()) {
        if (block.type === 'tool_result' && !previous.includes(block.tool_use_id)) {
          return `messages.${i}.content.${j}: unexpected tool_use_id found in tool_result blocks: ${block.tool_use_id}. Each tool_result block must have a corresponding tool_use block in the previous message`;
        }
      }
    }
  }
  const breakpoints =
    request.system.filter(hasCacheControl).length + request.tools.filter(hasCacheControl).length + messages.reduce((n, m) => n + blocksOf(m).filter(hasCacheControl).length, 0);
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}`;
  // Longer-lived entries come first in prefix order (tools, system, messages): a 1h mark after a 5m one is refused.
  const ttls = [...request.tools, ...request.system, ...messages.flatMap((m) => blocksOf(m))].flatMap((x) => {
    const mark = (x as { cache_control?: { ttl?: unknown } | null }).cache_control;
    return mark ? [mark.ttl ?? '5m'] : [];
  });
  const unknownTtl = ttls.find((ttl) => ttl !== '5m' && ttl !== '1h');
  if (unknownTtl !== undefined) return `cache_control.ttl: Input should be '5m' or '1h', got ${JSON.stringify(unknownTtl)}`;
  if (ttls.some((ttl, i) => ttl === '1h' && ttls.slice(0, i).includes('5m'))) return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block";
  return null;
}

/** The workflow the current activity works for: the model is only ever called from activities. */
function currentWorkflowId(): string {
  let workflowId: string | undefined;
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId;
  } catch {
    workflowId = undefined;
  }
  if (workflowId) return workflowId;
  throw ApplicationFailure.create({
    type: 'ScriptedModelMisuse',
    nonRetryable: true,
    message: 'the scripted model was called outside an activity, so it cannot tell which workflow is asking',
  });
}

/** A scripted model for one test file's worker; scripts are registered per workflow id. */
export function scriptedModel(): ScriptedModel {
  const scripts = new Map<string, { replies: ScriptStep[]; purposes: Script['purposes'] }>();
  const sent = new Map<string, ModelRequest[]>();
  const served = new Map<string, ModelReply[]>();
  const failed = new Map<string, string[]>();
  const fail = (workflowId: string, error: ApplicationFailure): never => {
    push(failed, workflowId, error.message);
    throw error;
  };
  const push = <T>(map: Map<string, T[]>, key: string, value: T) => map.set(key, [...(map.get(key) ?? []), value]);

  return {
    label: 'scripted model (test double)',
    offline: true,
    script(workflowId, script) {
      const s = Array.isArray(script) ? { replies: script } : script;
      scripts.set(workflowId, { replies: [...s.replies], purposes: s.purposes });
    },
    requests(workflowId, purpose) {
      return (sent.get(workflowId) ?? []).filter((r) => !purpose || r.purpose === purpose).map((r) => structuredClone(r));
    },
    replies(workflowId) {
      return structuredClone(served.get(workflowId) ?? []);
    },
    remaining(workflowId) {
      return scripts.get(workflowId)?.replies.length ?? 0;
    },
    failures(workflowId) {
      return [...(failed.get(workflowId) ?? [])];
    },
    async create(request) {
      const workflowId = currentWorkflowId();
      push(sent, workflowId, structuredClone(request));
      const call = sent.get(workflowId)!.length;
      const problem = requestProblem(request);
      if (problem) fail(workflowId, invalidRequest(workflowId, call, problem));
      const script = scripts.get(workflowId);
      if (!script) {
        return fail(
          workflowId,
          ApplicationFailure.create({
            type: 'ScriptMissing',
            nonRetryable: true,
            message: `scripted model: no script for ${workflowId} (call ${call}, purpose ${request.purpose})`,
          }),
        );
      }
      const byPurpose = script.purposes?.[request.purpose];
      let step: ScriptStep | undefined;
      if (byPurpose) step = byPurpose;
      else if (request.purpose === 'investigate') step = script.replies.shift();
      if (!step) {
        const investigateCalls = sent.get(workflowId)!.filter((r) => r.purpose === 'investigate').length;
        return fail(
          workflowId,
          ApplicationFailure.create({
            type: 'ScriptExhausted',
            nonRetryable: true,
            message:
              request.purpose === 'investigate'
                ? `scripted model: the script for ${workflowId} ran out at investigate step ${investigateCalls} (call ${call})`
                : `scripted model: the script for ${workflowId} has no answer for a ${request.purpose} request (call ${call})`,
          }),
        );
      }
      const scripted = typeof step === 'function' ? step(structuredClone(request)) : step;
      const done: ModelReply = {
        id: `msg_scripted_${++seq}`,
        model: 'scripted-model',
        content: structuredClone(scripted.content),
        stop_reason: scripted.stop_reason,
        usage: scripted.usage ?? estimatedUsage(request, scripted.content, (served.get(workflowId) ?? []).length),
      };
      push(served, workflowId, structuredClone(done));
      return done;
    },
  };
}

/** The tool_result blocks of a request's last user message, in order. */
export function lastToolResults(request: ModelRequest): { tool_use_id: string; content: string; is_error: boolean }[] {
  const last = request.messages[request.messages.length - 1];
  return blocksOf(last!).flatMap((b) =>
    b.type === 'tool_result' ? [{ tool_use_id: b.tool_use_id, content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content), is_error: b.is_error === true }] : [],
  );
}

/** Every tool_result block a request carries, with the id of the tool_use it answers. */
export function allToolResults(request: ModelRequest): { tool_use_id: string; content: string }[] {
  return request.messages.flatMap((m) =>
    blocksOf(m).flatMap((b) => (b.type === 'tool_result' ? [{ tool_use_id: b.tool_use_id, content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content) }] : [])),
  );
}
