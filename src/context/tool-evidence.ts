import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { formatMoney } from './money';

// The evidence lines of the refund note: what the tools found, said the way a support agent
// would say it ("Order 5102: delivered, placed 2 Mar 2026, total £42.00"), not the JSON the
// model was given. Pure and deterministic, so the workflow builds them. A tool with no sentence
// of its own (or a result that is not the JSON its tool gives) falls back to its plain fields.

/** Longest evidence line; the note links to the whole transcript for the rest. */
const MAX_LINE = 240;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const day = (v: unknown): string | undefined => str(v)?.slice(0, 10);
const clip = (text: string): string => (text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1).trimEnd()}…` : text);
const join = (parts: (string | undefined | false)[], sep = ', ') => parts.filter(Boolean).join(sep);

function order(r: Json, currency?: string): string {
  const items = Array.isArray(r.items) ? r.items.filter(isObject).map((i) => `${str(i.name) ?? 'item'} x${num(i.qty) ?? 1}`) : [];
  const shipment = isObject(r.shipment) ? join([str(r.shipment.courier), str(r.shipment.tracking_number), str(r.shipment.status)], ' ') : undefined;
  const total = num(r.total_cents);
  return join([
    `Order ${str(r.order_id) ?? '?'}: ${str(r.status) ?? 'status unknown'}`,
    day(r.placed_at) && `placed ${day(r.placed_at)}`,
    total !== undefined && `total ${formatMoney(total, str(r.currency) ?? currency)}`,
    items.length > 0 && `items: ${items.join(', ')}`,
    shipment && `shipment: ${shipment}`,
  ]);
}

function payments(r: Json, currency?: string): string {
  const money = (v: unknown) => (num(v) === undefined ? '?' : formatMoney(num(v)!, currency));
  return join([
    `Payments for order ${str(r.order_id) ?? '?'}: charged ${money(r.charged_cents)}`,
    `refunded ${money(r.refunded_cents)}`,
    `refundable ${money(r.refundable_cents)}`,
    r.possible_duplicate_charge === true && 'possible duplicate charge',
  ]);
}

function tracking(r: Json): string {
  const events = Array.isArray(r.events) ? r.events.filter(isObject) : [];
  const latest = events.slice(0, 2).map((e) => join([day(e.at), str(e.status), str(e.location) && `at ${str(e.location)}`, str(e.detail)], ' '));
  return `Tracking for order ${str(r.order_id) ?? '?'}: ${latest.join('; ') || 'no events'}`;
}

function orders(r: Json, currency?: string): string {
  const list = Array.isArray(r.orders) ? r.orders.filter(isObject) : [];
  const shown = list
    .slice(0, 4)
    .map((o) =>
      `${str(o.order_id) ?? '?'} ${str(o.status) ?? ''} ${num(o.total_cents) === undefined ? '' : formatMoney(num(o.total_cents)!, currency)}`.replace(/\s+/g, ' ').trim(),
    );
  return `Recent orders: ${shown.join('; ') || 'none'}`;
}

function tickets(r: Json): string {
  const list = Array.isArray(r.tickets) ? r.tickets.filter(isObject) : [];
  const shown = list.slice(0, 3).map((t) => `${str(t.ticket_id) ?? '?'} (${join([day(t.opened_at), str(t.status)])}) ${str(t.subject) ?? ''}`.trim());
  return `Earlier tickets: ${shown.join('; ') || 'none'}`;
}

function policy(r: Json): string {
  return `Policy, ${str(r.title) ?? str(r.topic) ?? '?'}: ${str(r.text) ?? ''}`;
}

/** Any other JSON result: its plain fields, "key value", as a person would skim them. */
function fields(r: Json): string {
  return Object.entries(r)
    .filter(([, v]) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
    .map(([k, v]) => `${k.replace(/_/g, ' ')} ${String(v)}`)
    .join(', ');
}

const SENTENCES: Record<string, (r: Json, currency?: string) => string> = {
  get_order: order,
  get_payments: payments,
  get_tracking_events: tracking,
  list_orders: orders,
  get_earlier_tickets: tickets,
  lookup_policy: policy,
};

/**
 * One tool result as a sentence a person reads, whole (the console shows it in full beside the
 * raw result). `currency` is the order's, for results that give amounts without one.
 */
export function toolSentence(tool: string, content: string, currency?: string): string {
  const flat = content.replace(/\s+/g, ' ').trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return `${tool}: ${flat}`;
  }
  if (!isObject(parsed)) return `${tool}: ${flat}`;
  const sentence = SENTENCES[tool];
  const line = sentence ? sentence(parsed, currency) : `${tool}: ${fields(parsed)}`;
  return line.replace(/\s+/g, ' ').trim();
}

/** One tool result as a line of the refund note: the sentence, cut at MAX_LINE (the note links to the whole transcript). */
export function evidenceLine(tool: string, content: string, currency?: string): string {
  return clip(toolSentence(tool, content, currency));
}

/** What the tools found this case, newest last, for the refund note's evidence. */
export function toolEvidence(transcript: MessageParam[], options: { limit?: number; currency?: string } = {}): string[] {
  const names = new Map<string, string>();
  const found: string[] = [];
  for (const message of transcript) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use') names.set(block.id, block.name);
      if (block.type === 'tool_result' && !block.is_error) {
        const name = names.get(block.tool_use_id);
        if (!name || name === 'request_refund' || name === 'read_notes' || name === 'write_notes') continue;
        const text = typeof block.content === 'string' ? block.content : (block.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join(' ');
        found.push(evidenceLine(name, text, options.currency));
      }
    }
  }
  return found.slice(-(options.limit ?? 5));
}
