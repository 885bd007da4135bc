import type { ContentBlock } from '@anthropic-ai/sdk/resources/messages';
import { QUESTION_PREFIX, TICKET_MARK } from '../../context/wire';
import type { ModelReply, ModelRequest } from '../../schemas/model';
import { estimateRequestTokens, estimateTokens } from '../../context/tokens';

// The offline model's answer to a bulk_read request: it matches the question's key terms
// against every ticket, deterministically, and lists the tickets that match with a quote.

/** The model name offline bulk-read replies carry. */
export const OFFLINE_BULK_READER_MODEL = 'offline-investigator (deterministic ticket reader)';

/** One ticket as read back from the helper prompt. */
export interface ReadTicket {
  id: string;
  opened: string;
  order: string;
  subject: string;
  body: string;
}

const STOPWORDS = new Set(
  (
    'a an and any are about all as at be been by can could did do does earlier for from had has have how i in is it its ' +
    'list me mention mentioned mentions my of on or our previous said say says show tell that the their them there these ' +
    'they this those ticket tickets to was we were what when where which who with customer customers problem problems issue issues'
  ).split(' '),
);

const STEM_RULES: ReadonlyArray<readonly [string, string]> = [
  ['ies', 'y'],
  ['ied', 'y'],
  ['ing', ''],
  ['ery', ''],
  ['ed', ''],
  ['es', ''],
  ['er', ''],
  ['s', ''],
  ['y', ''],
  ['e', ''],
];

/** A crude stem, enough to match "buildings" to "building" and "delivered" to "delivery". */
export function stem(word: string): string {
  let w = word.toLowerCase();
  for (;;) {
    const rule = STEM_RULES.find(([suffix]) => w.length - suffix.length >= 4 && w.endsWith(suffix));
    if (!rule) return w;
    w = w.slice(0, w.length - rule[0].length) + rule[1];
  }
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+(?:'[a-z]+)?/g) ?? [];
}

/** The question's alternatives ("X or Y" asks about either), each as its key-term stems. */
export function keyTerms(question: string): string[][] {
  return question
    .split(/\bor\b|,|;/i)
    .map((part) =>
      words(part)
        .filter((w) => !STOPWORDS.has(w))
        .map(stem),
    )
    .filter((terms) => terms.length > 0);
}

/** The tickets in a helper prompt (see helperPrompt). */
export function readTickets(text: string): ReadTicket[] {
  return text
    .split(TICKET_MARK)
    .slice(1)
    .map((chunk) => {
      const lines = chunk.split('\n');
      const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? '';
      const bodyStart = lines.findIndex((l) => l.startsWith('subject: ')) + 1;
      return {
        id: (lines[0] ?? '').trim(),
        opened: field('opened'),
        order: field('order'),
        subject: field('subject'),
        body: lines.slice(bodyStart).join('\n').trim(),
      };
    });
}

function hasAll(stems: Set<string>, terms: string[]): boolean {
  return terms.every((t) => stems.has(t));
}

function quoteFor(ticket: ReadTicket, terms: string[]): string {
  // Body sentences first: they say more than the subject line when both match.
  const candidates = [...ticket.body.split(/(?<=[.!?])\s+|\n+/), ticket.subject].map((s) => s.trim()).filter(Boolean);
  const score = (s: string) => {
    const stems = new Set(words(s).map(stem));
    return terms.filter((t) => stems.has(t)).length;
  };
  const best = candidates.reduce((a, b) => (score(b) > score(a) ? b : a), candidates[0] ?? '');
  return best.length > 140 ? `${best.slice(0, 139).trimEnd()}…` : best;
}

/** Answers the question over the tickets by key-term matching. Pure and deterministic. */
export function answerQuestion(question: string, tickets: readonly ReadTicket[]): string {
  const alternatives = keyTerms(question);
  const about = alternatives.map((t) => t.join(' ')).join('" or "');
  if (alternatives.length === 0) return `Read ${tickets.length} tickets, but the question names nothing to look for.`;
  const matches = tickets.flatMap((ticket) => {
    const stems = new Set(words(`${ticket.subject} ${ticket.body}`).map(stem));
    const hit = alternatives.find((terms) => hasAll(stems, terms));
    return hit ? [{ ticket, terms: hit }] : [];
  });
  if (matches.length === 0) return `None of the ${tickets.length} earlier tickets mention "${about}".`;
  const lines = matches.slice(0, 8).map(({ ticket, terms }) => {
    const order = ticket.order && ticket.order !== 'none' ? `, order ${ticket.order}` : '';
    return `- ${ticket.id} (${ticket.opened}${order}): "${quoteFor(ticket, terms)}"`;
  });
  const more = matches.length > 8 ? [`…and ${matches.length - 8} more.`] : [];
  return [`${matches.length} of ${tickets.length} earlier tickets mention "${about}":`, ...lines, ...more].join('\n');
}

function requestText(request: ModelRequest): string {
  return request.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'))).join('\n');
}

/** The offline model's reply to a 'bulk_read' request: a short answer naming the matching tickets. */
export function offlineBulkRead(request: ModelRequest): ModelReply {
  const text = requestText(request);
  const questionLine = text.split('\n').find((l) => l.startsWith(QUESTION_PREFIX)) ?? '';
  const answer = answerQuestion(questionLine.slice(QUESTION_PREFIX.length), readTickets(text));
  const content: ContentBlock[] = [{ type: 'text', text: answer, citations: null }];
  return {
    id: `msg_off_bulk_${estimateTokens(text).toString(16)}_${readTickets(text).length}`,
    model: OFFLINE_BULK_READER_MODEL,
    content,
    stop_reason: 'end_turn',
    usage: { input_tokens: estimateRequestTokens(request), output_tokens: estimateTokens(answer), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
