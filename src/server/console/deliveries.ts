import type { ParkedDelivery } from '../../db/parked-deliveries';
import { html } from './html';
import { csrfInput, page } from './layout';
import type { Session } from './session';

// Desk deliveries waiting for a person: from a requester nobody mapped to a customer, or refused
// by the ticket gate. Each row shows ids and times only (the words stay encrypted in Postgres);
// a person maps the requester, and everything parked for them goes on to its investigation, or
// discards the delivery with a reason. Both leave an audit row naming who.

const REASONS: Record<ParkedDelivery['reason'], string> = {
  unmapped_requester: 'requester not mapped to a customer',
  ticket_owner: 'the ticket belongs to another customer',
  event_reused: 'the event id was used before with other words',
};

/** The parked-deliveries page. */
export function deliveriesPage(parked: ParkedDelivery[], session: Session): string {
  const rows = parked.map(
    (p) =>
      html`<tr>
        <td>${p.id}</td>
        <td>${p.parkedAt.slice(0, 16).replace('T', ' ')}</td>
        <td>${p.desk}</td>
        <td><code>${p.requester}</code></td>
        <td>${p.ticketId}</td>
        <td>${REASONS[p.reason]}</td>
        <td>
          ${
            p.reason === 'unmapped_requester'
              ? html`<form method="post" action="/console/deliveries/map" class="inline">
                  ${csrfInput(session)}<input type="hidden" name="desk" value="${p.desk}" /><input type="hidden" name="requester" value="${p.requester}" />
                  <label>Customer id <input name="customerId" required maxlength="100" /></label>
                  <button type="submit">Map and deliver</button>
                </form>`
              : ''
          }
          <form method="post" action="/console/deliveries/${p.id}/discard" class="inline">
            ${csrfInput(session)}<label>Reason <input name="reason" required maxlength="500" /></label>
            <button type="submit">Discard</button>
          </form>
        </td>
      </tr>`,
  );
  const body = parked.length
    ? html`<table>
        <thead>
          <tr>
            <th>#</th>
            <th>Parked</th>
            <th>Desk</th>
            <th>Requester</th>
            <th>Ticket</th>
            <th>Why</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>`
    : html`<p>No desk delivery waits for a person.</p>`;
  return page(
    'Parked deliveries',
    html`<h1>Parked desk deliveries</h1>
      <p>Each was answered to the desk and kept here. Mapping a requester delivers everything parked for them, oldest first.</p>
      ${body}`,
    session,
  );
}
