import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Model } from '../model/port';
import { withHeartbeat } from './heartbeat';
import { CaseNotes, caseNotesJsonSchema, emptyCaseNotes, mergeCaseNotes } from '../schemas/case-notes';
import { renderTranscriptForNotes } from '../context/notes-transcript';
import { NO_USAGE, type ModelReply, type ModelRequest, type TokenUsage } from '../schemas/model';
import { describeIssues } from '../schemas/issues';

// Compaction (docs/architecture.md, "Working memory"): the older part of a long conversation is
// summarised by a model into CaseNotes fields, then merged in code with the notes of earlier
// compactions, so nothing is re-summarised and repeated compaction does not drift.

/** The summariser's instructions (docs/architecture.md: keep exact numbers, invent nothing). */
export const COMPACTION_INSTRUCTIONS =
  'Summarise this support case into the fields given. Keep exact order numbers, amounts and dates. ' +
  'Include only facts stated in the conversation. Give each fact its source in brackets (the tool name, or "customer"). ' +
  'In already_offered, list everything the customer has been told or offered.';

/** The summariser's system prompt. */
export const COMPACTION_SYSTEM = 'You write structured case notes for a customer-support investigation. Reply with the JSON object only.';

/** The summariser's reply budget (docs/architecture.md: max_tokens=2000). */
export const COMPACTION_MAX_TOKENS = 2_000;

/** The summariser's reply was not CaseNotes JSON; thrown so the activity retries. */
export class CaseNotesParseError extends Error {
  override name = 'CaseNotesParseError';
}

/** The compaction request for some messages: structured output against the CaseNotes schema. */
export function compactionRequest(messages: readonly MessageParam[]): ModelRequest {
  return {
    purpose: 'compact',
    system: [{ type: 'text', text: COMPACTION_SYSTEM }],
    tools: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: `${COMPACTION_INSTRUCTIONS}\n\n${renderTranscriptForNotes(messages)}` }] }],
    max_tokens: COMPACTION_MAX_TOKENS,
    output_schema: caseNotesJsonSchema(),
  };
}

/** The CaseNotes in a reply's text (a bare JSON object, or one fenced as ```json). */
export function parseCaseNotes(reply: ModelReply): CaseNotes {
  const text = reply.content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('')
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // The reply's text is not quoted: it summarises the customer's words, and failures are logged.
    throw new CaseNotesParseError(`compaction reply is not JSON (${text.length} chars of text${text ? `, starting with ${JSON.stringify(text[0])}` : ''})`);
  }
  const parsed = CaseNotes.safeParse(json);
  if (!parsed.success) {
    throw new CaseNotesParseError(`compaction reply is not CaseNotes: ${describeIssues(parsed.error, '(reply)')}`);
  }
  return parsed.data;
}

/** Builds the compaction activity over the model port. */
export function createCompactionActivities(deps: { model: Model }) {
  return {
    /** Summarises `messages` into CaseNotes and merges them into `previous`, field by field. */
    async compactConversation(input: { messages: MessageParam[]; previous: CaseNotes | null }): Promise<{ notes: CaseNotes; usage: TokenUsage }> {
      if (input.messages.length === 0) {
        return { notes: input.previous ?? emptyCaseNotes(), usage: { ...NO_USAGE } };
      }
      const reply = await withHeartbeat(() => deps.model.create(compactionRequest(input.messages)));
      return { notes: mergeCaseNotes(input.previous, parseCaseNotes(reply)), usage: reply.usage };
    },
  };
}
