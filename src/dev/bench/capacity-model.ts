import type { ContentBlock } from '@anthropic-ai/sdk/resources/messages';
import { estimateBlockTokens, estimateRequestTokens } from '../../context/tokens';
import type { Model } from '../../model/port';
import type { ModelReply, ModelRequest } from '../../schemas/model';

// The capacity bench's model: a scripted test double, NOT Claude. Every customer turn takes two
// steps, as a short real investigation does: it looks the order up (get_order), then answers
// with a reply of about 900 characters, so the case ends waiting for the customer with a
// realistic transcript. It refuses a request the Messages API would refuse (no messages, a
// conversation not ending on the user's turn) and times itself, so the bench can report the
// model's own time apart from the orchestration around it.

/** What the drill's reply says; long enough to be a real answer, the same every time. */
const ANSWER =
  'Thank you for your patience. I have looked up order 5102: the courier marked it delivered on 12 October at 14:02, ' +
  'but there is no photo and no signature on the scan, and the drop-off point recorded is not your address. ' +
  'I have opened a trace with the courier, who answers within two working days. If the parcel is not found by then, ' +
  'I will arrange a replacement or a full refund, whichever you prefer, and you will not need to send anything back. ' +
  'In the meantime, could you check once more with your neighbours at numbers 14 and 16, and let me know if anything turns up? ' +
  'You can reply here at any time; your case stays open and I will pick it up straight away.';

/** The capacity drill model, and the milliseconds each of its calls took. */
export interface CapacityModel extends Model {
  /** Milliseconds spent in the model, per ticket id, since the last `take`; clears what it returns. */
  take(): Record<string, number>;
}

/** The case a request belongs to: the bench puts "[case <ticket id>]" in the customer's first message. */
function caseOf(request: ModelRequest): string {
  return /\[case ([^\]\s]+)\]/.exec(JSON.stringify(request.messages))?.[1] ?? 'unknown';
}

/** The drill model; `delayMs` stands in for the API's own latency (0: answer at once). */
export function createCapacityModel(options: { delayMs?: number } = {}): CapacityModel {
  let spent: Record<string, number> = {};
  let seq = 0;
  return {
    label: 'capacity drill (scripted test double: look the order up, then answer)',
    offline: true,
    take() {
      const taken = spent;
      spent = {};
      return taken;
    },
    async create(request: ModelRequest): Promise<ModelReply> {
      const started = performance.now();
      if (request.purpose !== 'investigate') throw new Error(`the capacity drill model answers investigate requests only, not ${request.purpose}`);
      const last = request.messages[request.messages.length - 1];
      if (!last || last.role !== 'user') throw new Error('the Messages API refuses a conversation that does not end on the user turn');
      const lookedUp = typeof last.content !== 'string' && last.content.some((b) => b.type === 'tool_result');
      seq += 1;
      const content: ContentBlock[] = lookedUp
        ? [{ type: 'text', text: ANSWER, citations: null }]
        : [{ type: 'tool_use', id: `toolu_cap_${process.pid}_${seq}`, name: 'get_order', input: { order_id: '5102' }, caller: { type: 'direct' } }];
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      const reply: ModelReply = {
        id: `msg_cap_${process.pid}_${seq}`,
        model: 'capacity-drill (test double)',
        content,
        stop_reason: lookedUp ? 'end_turn' : 'tool_use',
        usage: {
          input_tokens: estimateRequestTokens(request),
          output_tokens: content.reduce((n, b) => n + estimateBlockTokens(b), 0),
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      };
      const id = caseOf(request);
      spent[id] = (spent[id] ?? 0) + (performance.now() - started);
      return reply;
    },
  };
}
