import type { ModelRequest } from '../../schemas/model';
import { asText, called, latestResult, type ConversationView } from './conversation';
import { money } from './replies';

// The offline investigator's use of a shop's own MCP tools (docs/mcp.md), when the run offers
// them: a customer asking about an order's warranty gets it looked up (a read-only tool), and one
// asking for store credit on it gets the credit tool called, which casework files for a person's
// approval (a money-moving tool). The tools are recognised by what they do, as their names say
// (`mcp_<server>_lookup_warranty`, `mcp_<server>_issue_store_credit`); without them, nothing here applies.

/** The store credit the offline investigator asks for: a goodwill gesture while a warranty claim is open. */
export const OFFLINE_STORE_CREDIT_CENTS = 1_500;

type Obj = Record<string, unknown>;

/** The next step for a warranty or store-credit ask on `orderId`, or undefined when the turn asks neither or the tools are not offered. */
export function shopToolStep(
  request: ModelRequest,
  view: ConversationView,
  text: string,
  orderId: string | undefined,
): { text?: string; calls: { name: string; input: Obj }[] } | undefined {
  if (!orderId || !/warranty/i.test(text)) return undefined;
  const offered = (suffix: string) => request.tools.find((t) => t.name.startsWith('mcp_') && t.name.endsWith(suffix))?.name;
  const lookup = offered('_lookup_warranty');
  if (!lookup) return undefined;
  const calls = view.calls;
  if (!called(calls, lookup)) return { calls: [{ name: lookup, input: { order_id: orderId } }] };
  const credit = /store credit/i.test(text) ? offered('_issue_store_credit') : undefined;
  if (credit && !called(calls, credit)) {
    const reason = `Goodwill credit on order ${orderId} while the warranty claim is looked at`;
    return { calls: [{ name: credit, input: { order_id: orderId, amount_cents: OFFLINE_STORE_CREDIT_CENTS, reason } }] };
  }
  const found = latestResult<Obj>(calls, lookup);
  const cover = found?.covered_until
    ? `Order ${orderId} is covered by ${asText(found.plan, 'a warranty')} until ${asText(found.covered_until)}.`
    : `I could not find a warranty on record for order ${orderId}.`;
  if (!credit) return { text: cover, calls: [] };
  // The decision on the credit reaches the model as a note naming the tool: approved and called, or not.
  const notes = JSON.stringify(request.messages);
  const amount = money(OFFLINE_STORE_CREDIT_CENTS);
  const outcome = /\\"called\\":true/.test(notes)
    ? `Store credit of ${amount} has been added to your account.`
    : /\\"decision\\":\\"denied\\"/.test(notes)
      ? `I am sorry, I cannot add store credit to your account this time.`
      : `I have asked a colleague to approve store credit of ${amount}; you will hear from us once it is decided.`;
  return { text: `${cover} ${outcome}`, calls: [] };
}
