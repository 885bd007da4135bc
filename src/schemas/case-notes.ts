import { z } from 'zod';

// Compaction's contract: the structured notes an older part of a conversation is summarised
// into (docs/architecture.md: CaseNotes) and how notes from successive compactions merge (the text the
// summariser reads is context/notes-transcript.ts). Named fields, merged in code, so that compacting
// again never re-summarises a summary and nothing drifts.

/** The CaseNotes: what the older part of a case established, as named fields. */
export const CaseNotes = z.object({
  order_ids: z.array(z.string()).describe('Every order number mentioned, exactly as written, e.g. "4471".'),
  customer_problem: z.string().describe('The problem in one or two sentences, with exact dates and amounts.'),
  facts_established: z.array(z.string()).describe('Each fact with its source in brackets, e.g. "scanned at Hub 4 on 9 Oct (get_tracking_events)".'),
  already_offered: z.array(z.string()).describe('What the customer has been told or offered, e.g. "offered a replacement".'),
  customer_wants: z.string().describe('What the customer asked for, in their terms; empty when unknown.'),
  open_questions: z.array(z.string()).describe('Questions still unanswered.'),
});
/** Case notes as the workflow carries them. */
export type CaseNotes = z.infer<typeof CaseNotes>;

/** The JSON schema sent as the compaction request's output_schema (structured output). */
export function caseNotesJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(CaseNotes) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** Notes with nothing in them. */
export function emptyCaseNotes(): CaseNotes {
  return { order_ids: [], customer_problem: '', facts_established: [], already_offered: [], customer_wants: '', open_questions: [] };
}

const key = (item: string) => item.trim().replace(/\s+/g, ' ').toLowerCase();

function union(older: readonly string[], newer: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const item of [...older, ...newer]) {
    const text = item.trim();
    if (!text || seen.has(key(text))) continue;
    seen.add(key(text));
    out.push(text);
  }
  return out;
}

/**
 * Merges notes from a newer compaction into the previous ones, field by field: lists are
 * unions without duplicates, previous items first; a newer scalar wins only when non-empty.
 * Nothing previously recorded is lost, already_offered above all, and merging the same notes
 * again changes nothing.
 */
export function mergeCaseNotes(previous: CaseNotes | null, newer: CaseNotes): CaseNotes {
  const base = previous ?? emptyCaseNotes();
  const scalar = (older: string, next: string) => (next.trim() ? next.trim() : older);
  return {
    order_ids: union(base.order_ids, newer.order_ids),
    customer_problem: scalar(base.customer_problem, newer.customer_problem),
    facts_established: union(base.facts_established, newer.facts_established),
    already_offered: union(base.already_offered, newer.already_offered),
    customer_wants: scalar(base.customer_wants, newer.customer_wants),
    open_questions: union(base.open_questions, newer.open_questions),
  };
}
