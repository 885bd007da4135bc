import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { evidenceLine, toolSentence } from '../../context/tool-evidence';
import type { StepRecord } from '../../schemas/investigation';

// The tool calls of a transcript, paired with their results, and laid against the steps the
// status query reports. Pure: the console renders what this returns.

/** One tool call and what it returned, word for word (the workflow's transcript keeps everything). */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
  result: string;
  isError: boolean;
}

/** A tool result's content as text. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : `[${b.type ?? 'block'}]`)).join('\n');
  }
  return '';
}

/** Every tool result of a transcript as text, by the id of the call it answers. */
export function toolResults(transcript: readonly MessageParam[]): Map<string, { text: string; isError: boolean }> {
  const results = new Map<string, { text: string; isError: boolean }>();
  for (const message of transcript) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result') results.set(block.tool_use_id, { text: resultText(block.content), isError: block.is_error === true });
    }
  }
  return results;
}

/** The tool calls of each assistant message, in order, each with its result (empty when none came yet). */
export function toolCallsByMessage(transcript: readonly MessageParam[]): ToolCall[][] {
  const results = toolResults(transcript);
  const out: ToolCall[][] = [];
  for (const message of transcript) {
    if (message.role !== 'assistant') continue;
    const blocks = typeof message.content === 'string' ? [] : message.content;
    out.push(
      blocks.flatMap((block) => {
        if (block.type !== 'tool_use') return [];
        const result = results.get(block.id);
        return [{ id: block.id, name: block.name, input: block.input, result: result?.text ?? '', isError: result?.isError ?? false }];
      }),
    );
  }
  return out;
}

/**
 * The tool calls of each step. A step is one model call, so step N's calls are the Nth
 * assistant message's; where the names disagree (a transcript rebuilt by a recovery), the
 * step keeps only the names it recorded.
 */
export function toolCallsBySteps(steps: readonly StepRecord[], transcript: readonly MessageParam[]): (ToolCall[] | null)[] {
  const byMessage = toolCallsByMessage(transcript);
  const offset = byMessage.length - steps.length;
  return steps.map((step, i) => {
    const calls = byMessage[i + offset];
    if (!calls || calls.map((c) => c.name).join(',') !== step.tools.join(',')) return null;
    return calls;
  });
}

const clip = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** A tool call's arguments as a person skims them: "order_id=5102, page=1". */
export function callArgs(input: unknown): string {
  return input && typeof input === 'object'
    ? Object.entries(input as Record<string, unknown>)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(', ')
    : '';
}

/** What a call found, whole: the refund note's sentence for it, an error's own words, or that no result came yet. */
export function callSentence(call: ToolCall, currency?: string): string {
  if (!call.result) return 'no result yet';
  return call.isError ? `error: ${call.result}` : toolSentence(call.name, call.result, currency);
}

/** One line for a tool call: its name, its arguments, and what it found as the refund note says it (cut at the note's line length). */
export function oneLine(call: ToolCall, currency?: string): string {
  const head = `${call.name}(${clip(callArgs(call.input), 60)})`;
  const found = !call.result ? 'no result yet' : call.isError ? `error: ${clip(call.result, 200)}` : evidenceLine(call.name, call.result, currency);
  return `${head} → ${found}`;
}

/** The tool calls whose tool the notes cite by name ("… (get_tracking_events)"), else all but the refund request itself. */
export function citedCalls(calls: readonly ToolCall[], notes: readonly string[]): ToolCall[] {
  const evidence = calls.filter((c) => c.name !== 'request_refund');
  const text = notes.join('\n');
  const cited = evidence.filter((c) => text.includes(c.name));
  return cited.length ? cited : evidence;
}
