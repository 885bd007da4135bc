import type { CaseView } from './cases';
import { conversationOf, statusOnlyConversation, type ConversationEntry, type DecisionEntry } from './conversation';
import { count, money, when } from './format';
import { html, type Html } from './html';
import { callArgs, type ToolCall } from './tool-calls';

// The case page's conversation: each entry of conversation.ts as a list item, every word
// escaped (the customer's text and every tool result are untrusted), each tool result whole
// behind an expander with the sentence saying what it found above it. No link here needs a
// grant beyond reading cases.

/** The anchor of a tool call's entry, so the steps table can link to its whole result. */
export function callAnchor(toolUseId: string): string {
  return `call-${toolUseId}`;
}

function rawResult(call: ToolCall): Html {
  if (!call.result) return html`<p class="muted">No result yet.</p>`;
  return html`<details data-raw-result>
    <summary>Whole result (${count(call.result.length)} characters)</summary>
    <pre>${call.result}</pre>
  </details>`;
}

const who = (label: string | Html) => html`<div class="who">${label}</div>`;
const words = (text: string) => html`<div class="words">${text}</div>`;

function decisionText(d: DecisionEntry): Html {
  const person = d.decidedBy ? ` (${d.decidedBy})` : '';
  const via = d.via ? ` via ${d.via}` : '';
  const outcome = d.refused
    ? html`<p class="bad">Nothing was paid: the order ledger refused it: ${d.refused}</p>`
    : d.paid
      ? html`<p>Paid ${money(d.paid.amountCents, d.paid.currency)} (refund ${d.paid.refundId}).</p>`
      : !d.settled
        ? html`<p class="muted">Recorded; casework is acting on it.</p>`
        : '';
  return html`${who(`Refund ${d.decision} by ${d.approver}${person}${via}`)}
    <p>Request ${d.requestId}${d.reason ? html`: “${d.reason}”` : ''}</p>
    ${outcome}`;
}

const RESOLUTIONS = { resumed: 'Resumed by', replied: 'Answered by', closed: 'Closed:' } as const;

function entryHtml(entry: ConversationEntry): Html {
  switch (entry.kind) {
    case 'customer':
      return html`<li class="entry customer" data-entry="customer">${who('Customer')}${words(entry.text)}</li>`;
    case 'reply': {
      const label = !entry.sent ? 'Held back: not sent to the customer' : entry.by ? `Reply from ${entry.by}` : 'Reply from casework';
      return html`<li class="entry reply${entry.sent ? '' : ' held'}" data-entry="reply" data-sent="${entry.sent}">${who(label)}${words(entry.text)}</li>`;
    }
    case 'agent_note':
      return html`<li class="entry agent-note" data-entry="agent-note">${who('The agent, before its tool calls (not sent)')}${words(entry.text)}</li>`;
    case 'thinking':
      return html`<li class="entry agent-note" data-entry="thinking">
        <details>
          <summary>The agent's thinking</summary>
          <pre>${entry.text}</pre>
        </details>
      </li>`;
    case 'tool':
      return html`<li class="entry tool${entry.call.isError ? ' error' : ''}" data-entry="tool" data-tool="${entry.call.name}" id="${callAnchor(entry.call.id)}">
        ${who(html`Tool <code>${entry.call.name}(${callArgs(entry.call.input)})</code>${entry.call.isError ? ' · error' : ''}`)}
        ${entry.sentence ? html`<p class="sentence" data-sentence>${entry.sentence}</p>` : ''} ${rawResult(entry.call)}
      </li>`;
    case 'refund_requested': {
      const amount = entry.amountCents === undefined ? 'a refund' : money(entry.amountCents, entry.currency);
      return html`<li class="entry decision" data-entry="refund-requested" id="${callAnchor(entry.call.id)}">
        ${who('Refund requested by the agent')}
        <p>${amount}${entry.orderId ? ` on order ${entry.orderId}` : ''}${entry.reason ? `: ${entry.reason}` : ''}${entry.requestId ? ` (request ${entry.requestId})` : ''}</p>
        ${entry.call.isError ? html`<p class="bad">Not filed: ${entry.call.result}</p>` : ''}
        ${entry.waiting ? html`<p class="notice">Waiting for a decision. <a href="/console/inbox">Open the inbox</a></p>` : ''} ${rawResult(entry.call)}
      </li>`;
    }
    case 'decision':
      return html`<li class="entry decision" data-entry="decision" data-decision="${entry.decision}">${decisionText(entry)}</li>`;
    case 'hand_off': {
      const r = entry.resolution;
      return html`<li class="entry hand-off" data-entry="hand-off">
        ${who(`Handed to a person${entry.at ? ` at ${when(entry.at)}` : ''}`)}
        <p>${entry.reason ?? 'The reason was not recorded (a run from before hand-overs were kept).'}</p>
        ${r ? html`<p class="muted" data-resolution>${RESOLUTIONS[r.action]} ${r.by} at ${when(r.at)}</p>` : html`<p class="notice">Waiting for a person.</p>`}
      </li>`;
    }
    case 'note':
      return html`<li class="entry note" data-entry="note">${who('casework, to the agent')}${words(entry.text)}</li>`;
  }
}

/** The conversation section of a case page: the entries, or why they cannot be shown. */
export function conversationSection(view: CaseView): Html {
  const heading = html`<h2 id="conversation">Conversation</h2>`;
  if (view.erasedOn) {
    return html`<section data-conversation>
      ${heading}
      <p class="notice" data-erased>The conversation was erased on ${view.erasedOn}: the customer's data key is destroyed.</p>
    </section>`;
  }
  const entries = view.transcript ? conversationOf(view.transcript, view.status) : statusOnlyConversation(view.status);
  return html`<section data-conversation>
    ${heading} ${view.transcript ? '' : html`<p class="notice" data-conversation-unread>The conversation could not be read now; below is what the case's status records.</p>`}
    ${
      entries.length
        ? html`<ol class="conversation">
            ${entries.map(entryHtml)}
          </ol>`
        : html`<p class="muted">Nothing has been said yet.</p>`
    }
  </section>`;
}
