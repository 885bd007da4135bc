import type { CustomerMemory, ShownNote } from '../../memory/control';
import { when } from './format';
import { html, type Html } from './html';
import { csrfInput, page } from './layout';
import type { Session } from './session';

// The customer's memory: profile, every note (current, expired, superseded) with its dates and
// the run that wrote it, past cases and the audit trail; forms to correct a note, forget a
// note, and forget everything, through the same operations (and audit) as the CLI.

/** The lookup page: which customer's memory to open (the id goes in a POST body, not the URL). */
export function lookupPage(session: Session): string {
  const body = html` <h1>Customer memory</h1>
    <form method="post" action="/console/customers/lookup" class="card">
      ${csrfInput(session)}
      <label for="customerId">Customer id</label>
      <input type="text" id="customerId" name="customerId" autocomplete="off" required maxlength="100" />
      <div class="actions"><button type="submit">Open memory</button></div>
    </form>`;
  return page('Customer memory', body, session);
}

function noteRow(note: ShownNote, ref: string, session: Session): Html {
  const id = `note-${note.note_id}`;
  return html`<tr class="note-${note.status}" data-note-id="${note.note_id}">
    <td>${note.note_id}</td>
    <td>${note.status}${note.superseded_by ? html`<br /><span class="muted">by note ${note.superseded_by}</span>` : ''}</td>
    <td>${note.kind}${note.subject ? ` · ${note.subject}` : ''}</td>
    <td data-note-text>${note.text}</td>
    <td>
      written ${when(note.written_at)}${note.corrected_at ? html`<br />corrected ${when(note.corrected_at)}` : ''}<br />expires
      ${when(note.expires_at)}${note.superseded_at ? html`<br />superseded ${when(note.superseded_at)}` : ''}
    </td>
    <td><code>${note.source_run}</code></td>
    <td>
      <form method="post" action="/console/customers/${ref}/correct">
        ${csrfInput(session)}<input type="hidden" name="noteId" value="${note.note_id}" />
        <label for="${id}-text">Corrected text</label>
        <input type="text" id="${id}-text" name="text" value="${note.text}" maxlength="1000" required />
        <div class="actions"><button type="submit">Correct</button></div>
      </form>
      <form method="post" action="/console/customers/${ref}/forget">
        ${csrfInput(session)}<input type="hidden" name="noteId" value="${note.note_id}" />
        <div class="actions"><button type="submit" class="danger">Forget note ${note.note_id}</button></div>
      </form>
    </td>
  </tr>`;
}

/** The memory page of one customer, reached by opaque reference `ref`; `open`: the cases an erasure would close first (undefined: they could not be listed). */
export function memoryPage(memory: CustomerMemory, ref: string, session: Session, open?: string[]): string {
  const profile = Object.entries(memory.profile);
  const body = html` <h1>What casework remembers about ${memory.customer_id}</h1>
    <h2>Profile</h2>
    ${
      profile.length
        ? html`<div class="table-wrap">
            <table>
              <tr>
                <th>field</th>
                <th>value</th>
                <th>from note</th>
                <th>expires</th>
              </tr>
              ${profile.map(
                ([field, entry]) =>
                  html`<tr>
                    <td>${field}</td>
                    <td>${entry?.value ?? ''}</td>
                    <td>${entry?.note_id ?? ''}</td>
                    <td>${entry ? when(entry.expires_at) : ''}</td>
                  </tr>`,
              )}
            </table>
          </div>`
        : html`<p class="muted">No profile fields.</p>`
    }
    <h2>Notes <span class="muted">(${memory.notes.length})</span></h2>
    ${
      memory.notes.length
        ? html`<div class="table-wrap">
            <table data-notes>
              <tr>
                <th>id</th>
                <th>status</th>
                <th>kind</th>
                <th>text</th>
                <th>dates</th>
                <th>written by run</th>
                <th>change</th>
              </tr>
              ${memory.notes.map((n) => noteRow(n, ref, session))}
            </table>
          </div>`
        : html`<p class="muted">No notes.</p>`
    }
    <h2>Past cases <span class="muted">(${memory.cases.length})</span></h2>
    ${
      memory.cases.length
        ? html`<div class="table-wrap">
            <table>
              <tr>
                <th>closed</th>
                <th>ticket</th>
                <th>orders</th>
                <th>problem</th>
                <th>resolution</th>
              </tr>
              ${memory.cases.map(
                (c) =>
                  html`<tr>
                    <td>${c.closed_on}</td>
                    <td>${c.ticket_id}</td>
                    <td>${c.order_ids.join(', ')}</td>
                    <td>${c.problem}</td>
                    <td>${c.resolution}</td>
                  </tr>`,
              )}
            </table>
          </div>`
        : html`<p class="muted">No past cases.</p>`
    }
    <h2>Forget everything</h2>
    <form method="post" action="/console/customers/${ref}/forget-all" class="card">
      ${csrfInput(session)}
      <p>Deletes every note, case and profile field of this customer. The audit trail keeps a row saying what went, without its text.</p>
      <label for="confirm">Type <code>forget</code> to confirm</label>
      <input type="text" id="confirm" name="confirm" autocomplete="off" required />
      <div class="actions"><button type="submit" class="danger">Forget everything</button></div>
    </form>
    <h2>Erase this customer</h2>
    <form method="post" action="/console/customers/${ref}/erase" class="card" data-erase>
      ${csrfInput(session)}
      <p>Deletes their memory and destroys their data key: every transcript and kept reply of theirs becomes unreadable, for good. Recorded with your name, without content.</p>
      ${
        open === undefined
          ? html`<p class="muted" data-erase-open>Their open cases could not be listed (Temporal did not answer); any that are open are closed first.</p>`
          : open.length
            ? html`<p data-erase-open>
                  First closes their ${open.length} open case(s): the customer gets a holding reply, the team an internal note, and a refund awaiting approval is withdrawn.
                </p>
                <ul data-erase-open>
                  ${open.map((id) => html`<li><a href="/console/cases/${id}">${id}</a></li>`)}
                </ul>`
            : html`<p class="muted" data-erase-open>No open cases.</p>`
      }
      <label for="erase-confirm">Type the customer id <code>${memory.customer_id}</code> to confirm</label>
      <input type="text" id="erase-confirm" name="confirm" autocomplete="off" required />
      <div class="actions"><button type="submit" class="danger">Erase customer</button></div>
    </form>
    <h2>Audit trail <span class="muted">(${memory.audit.length})</span></h2>
    <div class="table-wrap">
      <table data-audit>
        <tr>
          <th>when</th>
          <th>action</th>
          <th>who</th>
          <th>target</th>
          <th>detail</th>
        </tr>
        ${memory.audit.map(
          (a) =>
            html`<tr>
              <td>${when(a.at)}</td>
              <td>${a.action}</td>
              <td>${a.actor}</td>
              <td>${a.target}</td>
              <td><code>${JSON.stringify(a.detail)}</code></td>
            </tr>`,
        )}
      </table>
    </div>`;
  return page(`Memory of ${memory.customer_id}`, body, session);
}
