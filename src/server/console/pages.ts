import { html } from './html';
import { page } from './layout';
import type { Session } from './session';

// The console's small pages: sign-in and errors.

/** The sign-in page; `problem` says why the last attempt failed. */
export function signInPage(options: { problem?: string; open?: boolean } = {}): string {
  const body = html` <h1>Sign in</h1>
    ${options.problem ? html`<p class="flash error" role="alert">${options.problem}</p>` : ''}
    <form method="post" action="/console/sign-in" class="card">
      ${options.open ? html`<p class="notice">Open local mode: no API keys are configured, so any key signs in with every grant. Never run this way in production.</p>` : ''}
      <label for="key">API key</label>
      <input type="password" id="key" name="key" autocomplete="current-password" ${options.open ? '' : 'required'} />
      <label for="person">Your name</label>
      <input type="text" id="person" name="person" autocomplete="username" maxlength="100" />
      <p class="muted">
        Your name goes in the audit trail. For a key that decides as any approver, it is the approver name the refund limits are checked against; a key for one approver decides as
        that approver.
      </p>
      <div class="actions"><button type="submit">Sign in</button></div>
    </form>`;
  return page('Sign in', body);
}

/** A page for a refusal or failure, with the reason in words. */
export function errorPage(status: number, message: string, session?: Session): string {
  const title = status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status >= 500 ? 'Something failed' : 'Not done';
  const body = html` <h1>${title}</h1>
    <p class="card" role="alert" data-status="${status}">${message}</p>
    <p><a href="/console">Back to the console</a></p>`;
  return page(title, body, session);
}
