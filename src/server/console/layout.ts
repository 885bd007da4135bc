import { CSRF_FIELD } from './csrf';
import { html, type Html } from './html';
import type { Session } from './session';

// The shell every console page shares: navigation, who is signed in, the flash message, and
// the security headers that go with every page.

/** Headers for every console page: no framing, no inline script or style, no referrer leaks. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
});

/** The hidden CSRF field for a form of this session. */
export function csrfInput(session: Session): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrf}" />`;
}

/** True when the session may open customer memory pages (the support grant): only then are links to them shown. */
export function mayOpenMemory(session: Session): boolean {
  return session.principal.support;
}

/** A whole page: `session` absent on the sign-in and error pages of someone not signed in. */
export function page(title: string, body: Html, session?: Session): string {
  const flash = session?.flash;
  if (session) session.flash = undefined;
  const nav = session
    ? html`<nav aria-label="Console">
          <a href="/console/inbox">Approvals</a>
          ${mayOpenMemory(session) ? html`<a href="/console/customers">Customer memory</a>` : ''}
          ${mayOpenMemory(session) ? html`<a href="/console/deliveries">Parked deliveries</a>` : ''}
        </nav>
        <div class="who">
          <span>Signed in as ${session.person} (${session.principal.label})</span>
          <form class="inline" method="post" action="/console/sign-out">${csrfInput(session)}<button type="submit">Sign out</button></form>
        </div>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · casework console</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <header class="top"><a href="/console">casework console</a>${nav}</header>
        <main>${flash ? html`<p class="flash ${flash.kind}" role="status">${flash.text}</p>` : ''} ${body}</main>
      </body>
    </html> `.text;
}
