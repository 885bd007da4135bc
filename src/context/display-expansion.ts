import type { ContentBlockParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { CompactionPlan, LogEntry, StepPlan } from '../schemas/transcript-log';
import { toolDefinitions } from '../schemas/tool-specs';
import { planLayout, requestOfPlan, stepPlanSeqs } from './plan-request';
import { messagesOfLayout, resultText } from './references';
import { SYSTEM_PROMPT } from './system-prompt';

// Decoding for display (the codec server's /decode, for the web UI and `temporal
// --codec-endpoint`): a payload that holds a reference into the transcript log is shown with
// what the reference names. A tool result's preview becomes the whole result, a lean block of
// a carried skeleton the whole block, and a model step's plan the request it stood for, rebuilt
// by the same requestOfPlan the model activity sends. Pure: the entries are looked up by the
// caller (src/server/codec-expansion.ts). The worker never runs this: what it reads is unchanged.

/** Where an expanded value's entries come from: one investigation's log, or (none) the date its customer was erased. */
export interface EntrySource {
  entries: ReadonlyMap<number, LogEntry>;
  /** Set when the customer's data key is destroyed: every reference shows "erased on <date>". */
  erasedOn?: string;
}

/** What stands in for content whose customer's data key was destroyed. */
export const erasedText = (date: string) => `erased on ${date.slice(0, 10)}`;

/** How the system prompt shows in an expanded step: by name, not its words (they are the same on every call). */
export const SYSTEM_PROMPT_SHOWN = `(the system prompt: SYSTEM_PROMPT, ${SYSTEM_PROMPT.length} characters, the same on every call)`;

const TOOL_NAMES = toolDefinitions().map((t) => t.name);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** A step plan: the entries to write, the layout, the context blocks and where the reply goes (one of the retired first shape is shown as it is). */
function isStepPlan(v: Json): v is Json & StepPlan {
  return Array.isArray(v.entries) && isObject(v.context) && isSeq(v.replySeq) && typeof v.layout === 'string';
}

/** A compaction plan. */
function isCompactionPlan(v: Json): v is Json & CompactionPlan {
  return Array.isArray(v.entries) && typeof v.layout === 'string' && v.replySeq === undefined && isSeq(v.notesSeq);
}

/** A tool activity's outcome that wrote its result to the log: a preview and the entry. */
function isLoggedOutcome(v: Json): v is Json & { content: string; logged: { seq: number } } {
  return typeof v.content === 'string' && isObject(v.logged) && isSeq(v.logged.seq);
}

/** A numbered block of a skeleton (a carried transcript, a status answer): its type and its entry. */
function isLeanBlock(v: Json): v is Json & { seq: number; type: string } {
  return isSeq(v.seq) && typeof v.type === 'string';
}

/** True when `value` holds anything expandForDisplay would expand: the cheap test run before the log is read. */
export function hasReferences(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (Array.isArray(value)) return value.some((v) => hasReferences(v, depth + 1));
  if (!isObject(value)) return false;
  if (isStepPlan(value) || isCompactionPlan(value) || isLoggedOutcome(value) || isLeanBlock(value)) return true;
  return Object.values(value).some((v) => hasReferences(v, depth + 1));
}

/** The entries a value refers to, so a caller holding an older read of the log knows to read again. */
export function referencedSeqs(value: unknown, depth = 0, into: number[] = []): number[] {
  if (depth > 64) return into;
  if (Array.isArray(value)) {
    for (const v of value) referencedSeqs(v, depth + 1, into);
    return into;
  }
  if (!isObject(value)) return into;
  if (isStepPlan(value)) {
    const own = new Set(value.entries.map((e) => e.seq));
    try {
      for (const seq of stepPlanSeqs(value)) if (!own.has(seq)) into.push(seq);
    } catch {
      // A plan that does not decode is shown as it is.
    }
    return into;
  }
  if (isLoggedOutcome(value)) into.push(value.logged.seq);
  else if (isLeanBlock(value)) into.push(value.seq);
  for (const v of Object.values(value)) referencedSeqs(v, depth + 1, into);
  return into;
}

/** The entries a plan carries (new ones, written by its activity) together with the log's. */
function withPlanEntries(plan: { entries: LogEntry[] }, entries: ReadonlyMap<number, LogEntry>): Map<number, LogEntry> {
  const all = new Map(entries);
  for (const e of plan.entries) if (isObject(e) && isSeq(e.seq) && !all.has(e.seq)) all.set(e.seq, e);
  return all;
}

/** The system blocks as shown: the rules by name (cache markers kept, so the display says where the breakpoint is). */
function shownSystem(system: TextBlockParam[]): TextBlockParam[] {
  return system.map((block) => (block.text === SYSTEM_PROMPT ? { ...block, text: SYSTEM_PROMPT_SHOWN } : block));
}

/** A step plan as the request it stood for, the plan itself kept beside it. */
function expandStepPlan(plan: Json & StepPlan, source: EntrySource): Json {
  if (source.erasedOn) return { sent_to_the_model: erasedText(source.erasedOn), plan };
  try {
    const built = requestOfPlan(plan, withPlanEntries(plan, source.entries), { system: SYSTEM_PROMPT, tools: toolDefinitions() });
    return {
      sent_to_the_model: { system: shownSystem(built.system), tools: TOOL_NAMES, messages: built.messages, max_tokens: plan.max_tokens },
      plan,
    };
  } catch (error) {
    return { sent_to_the_model: `not rebuilt: ${(error as Error).message}`, plan };
  }
}

/** A compaction plan with the messages it summarised and the notes it started from. */
function expandCompactionPlan(plan: Json & CompactionPlan, source: EntrySource): Json {
  if (source.erasedOn) return { summarised: erasedText(source.erasedOn), plan };
  try {
    const entries = withPlanEntries(plan, source.entries);
    const previous = plan.previousSeq !== null ? (entries.get(plan.previousSeq)?.body ?? null) : (plan.previous ?? null);
    return { summarised: messagesOfLayout(planLayout(plan), entries), previous_notes: previous, plan };
  } catch (error) {
    return { summarised: `not rebuilt: ${(error as Error).message}`, plan };
  }
}

/** The whole block at `seq` when it is the block `lean` is a copy of (same type, same ids). */
function wholeBlock(lean: Json & { seq: number; type: string }, entries: ReadonlyMap<number, LogEntry>): ContentBlockParam | undefined {
  const entry = entries.get(lean.seq);
  if (!entry || entry.kind !== 'message' || !isObject(entry.body)) return undefined;
  const body = entry.body;
  if (body.type !== lean.type) return undefined;
  for (const id of ['id', 'tool_use_id'] as const) if (lean[id] !== undefined && body[id] !== lean[id]) return undefined;
  return entry.body as unknown as ContentBlockParam;
}

function expand(value: unknown, source: EntrySource, depth: number): unknown {
  if (depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => expand(v, source, depth + 1));
  if (!isObject(value)) return value;
  if (isStepPlan(value)) return expandStepPlan(value, source);
  if (isCompactionPlan(value)) return expandCompactionPlan(value, source);
  if (isLoggedOutcome(value)) {
    if (source.erasedOn) return { ...value, content: erasedText(source.erasedOn) };
    const entry = source.entries.get(value.logged.seq);
    const body = entry?.body as Json | undefined;
    return body?.type === 'tool_result' ? { ...value, content: resultText(body.content) } : value;
  }
  if (isLeanBlock(value)) {
    if (source.erasedOn) return { type: value.type, seq: value.seq, erased: erasedText(source.erasedOn) };
    const whole = wholeBlock(value, source.entries);
    if (whole) return { ...whole, seq: value.seq, ...(value.tokens !== undefined ? { tokens: value.tokens } : {}) };
    return value;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, source, depth + 1)]));
}

/**
 * The value as an operator should read it: every reference into the transcript log replaced by
 * what it names (see the comment at the top), or by "erased on <date>" when the customer's data
 * key is destroyed. Anything else is returned as it is; nothing is ever mutated.
 */
export function expandForDisplay(value: unknown, source: EntrySource): unknown {
  return expand(value, source, 0);
}
