import { z } from 'zod';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { NOTE_MAX_CHARS, NOTES_UPDATE_MAX_ITEMS } from './notes-update';

/** A tool's contract with the model: name, description and zod input schema. Pure: the workflow uses it too. */
export interface ToolSpec<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  /** Where the tool runs: an activity (touches the world) or the workflow itself (notes). */
  runs: 'activity' | 'workflow';
}

const orderId = z.string().min(1).max(40).describe('The order number, e.g. "4471".');
/** One list of a write_notes call; the workflow checks the same limits without zod (notesUpdateProblems). */
const noteItems = z.array(z.string().min(1).max(NOTE_MAX_CHARS)).max(NOTES_UPDATE_MAX_ITEMS).optional();
const page = z.number().int().min(1).max(50).default(1).describe('Page to show, starting at 1.');

/** Every tool the investigator may call. Descriptions are what the model reads. */
export const TOOL_SPECS = {
  get_order: {
    name: 'get_order',
    description: "Look up one of this customer's orders: items, amounts, status, delivery address and shipment.",
    input: z.object({ order_id: orderId }),
    runs: 'activity',
  },
  list_orders: {
    name: 'list_orders',
    description: "This customer's most recent orders, newest first, with status and courier. Use it when the customer does not give an order number.",
    input: z.object({ limit: z.number().int().min(1).max(10).default(5) }),
    runs: 'activity',
  },
  get_tracking_events: {
    name: 'get_tracking_events',
    description: 'Courier tracking events for an order, newest first, with courier codes translated to words. Paged.',
    input: z.object({ order_id: orderId, page }),
    runs: 'activity',
  },
  get_earlier_tickets: {
    name: 'get_earlier_tickets',
    description: "This customer's earlier support tickets, newest first, each with a short excerpt. Paged.",
    input: z.object({ page }),
    runs: 'activity',
  },
  get_payments: {
    name: 'get_payments',
    description: 'Payment records (charges and refunds) for an order, with payment codes translated to words.',
    input: z.object({ order_id: orderId }),
    runs: 'activity',
  },
  lookup_policy: {
    name: 'lookup_policy',
    description: 'Find the refund or delivery policy that applies to a situation, e.g. "parcel marked delivered but not received".',
    input: z.object({ topic: z.string().min(2).max(200) }),
    runs: 'activity',
  },
  request_refund: {
    name: 'request_refund',
    description:
      'Ask a human to approve a refund. The investigation pauses until a person approves or denies it; ' +
      'the result says which, and shows the order ledger: what was already refunded, requests pending in other cases, and what remains. ' +
      'Never tell the customer a refund is coming before it is approved.',
    input: z.object({
      order_id: orderId,
      amount_cents: z.number().int().positive().describe('Amount to refund, in cents.'),
      reason: z.string().min(5).max(500),
      kind: z
        .enum(['duplicate_charge', 'not_received', 'goodwill', 'partial'])
        .optional()
        .describe(
          'What the refund is for: duplicate_charge (reverses the extra charge), not_received (reverses the charge for goods that never came), goodwill or partial (an amount off the order). Default partial.',
        ),
      charge_id: z
        .string()
        .min(1)
        .max(80)
        .optional()
        .describe('The charge a duplicate_charge or not_received refund reverses (ch_… from get_payments). Left out: the later duplicate, or the charge for the goods.'),
    }),
    runs: 'activity',
  },
  issue_refund: {
    name: 'issue_refund',
    description: 'Issue a refund that a human has approved. Refused unless the request was approved.',
    input: z.object({ request_id: z.string().min(1).max(80) }),
    runs: 'activity',
  },
  write_notes: {
    name: 'write_notes',
    description:
      'Add to your own running notes for this investigation: what you found, what you ruled out, what is left to do. ' +
      'Notes survive when old tool results are cleared. Mark to-do items finished with "done".',
    input: z.object({
      found: noteItems,
      ruled_out: noteItems,
      to_do: noteItems,
      done: noteItems,
    }),
    runs: 'workflow',
  },
  read_notes: {
    name: 'read_notes',
    description: 'Read your running notes for this investigation.',
    input: z.object({}),
    runs: 'workflow',
  },
  review_tickets: {
    name: 'review_tickets',
    description:
      "Have a helper read ALL of this customer's earlier tickets in full and answer one question about them, " +
      'e.g. "which tickets mention the wrong building?". Returns a short answer, not the tickets.',
    input: z.object({ question: z.string().min(5).max(500) }),
    runs: 'activity',
  },
  remember: {
    name: 'remember',
    description:
      'Save one fact about this customer that will help in future conversations, such as a delivery instruction ' +
      'or a stated preference. Do not save payment details, passwords, or anything the customer did not state themselves.',
    input: z.object({ fact: z.string().min(1).max(500) }),
    runs: 'activity',
  },
  recall: {
    name: 'recall',
    description: 'Search older notes and past cases about this customer, e.g. when they say "same as last time".',
    input: z.object({ query: z.string().min(1).max(300) }),
    runs: 'activity',
  },
} as const satisfies Record<string, ToolSpec>;

/** The name of a known tool. */
export type ToolName = keyof typeof TOOL_SPECS;

/** The validated input of a tool. */
export type ToolInput<N extends ToolName> = z.infer<(typeof TOOL_SPECS)[N]['input']>;

/** True when `name` is a tool casework knows. */
export function isToolName(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(TOOL_SPECS, name);
}

/** The Messages API tool definitions for the given tools, in a stable order (a stable cached prefix). */
export function toolDefinitions(names: readonly ToolName[] = Object.keys(TOOL_SPECS) as ToolName[]): Tool[] {
  return names.map((name) => {
    const spec: ToolSpec = TOOL_SPECS[name];
    const schema = z.toJSONSchema(spec.input, { io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name: spec.name, description: spec.description, input_schema: schema as Tool['input_schema'] };
  });
}
