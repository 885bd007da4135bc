// A person's browser, as far as the console's server can tell: it keeps the cookies the
// console sets, follows no redirects on its own (so a test sees each 303), and posts forms as
// urlencoded bodies with the CSRF token of the last page it read, unless told otherwise.

/** One answer from the console. */
export interface ConsoleAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** A cookie-keeping client for one person. */
export interface ConsoleAgent {
  get(path: string, headers?: Record<string, string>): Promise<ConsoleAnswer>;
  /** Posts `fields`; the last page's CSRF token is added unless `csrf` is given (false: none at all). */
  post(path: string, fields: Record<string, string>, options?: { csrf?: string | false; headers?: Record<string, string> }): Promise<ConsoleAnswer>;
  /** GETs a path and follows one 303 (what a browser shows after a form). */
  follow(answer: ConsoleAnswer): Promise<ConsoleAnswer>;
  /** Signs in with `key` (and `person`), returning the sign-in POST's answer. */
  signIn(key: string, person?: string, headers?: Record<string, string>): Promise<ConsoleAnswer>;
  /** Every Set-Cookie header the console sent this agent, as sent. */
  readonly setCookies: string[];
  /** The CSRF token of the last page read (empty when it had none). */
  readonly csrf: string;
}

const CSRF_INPUT = /name="csrf" value="([^"]+)"/;

/**
 * An agent for the console served at `base` (e.g. http://127.0.0.1:1234), or at whichever
 * replica `base()` names for each request (a balancer, as far as the console can tell).
 */
export function consoleAgent(base: string | (() => string)): ConsoleAgent {
  const baseOf = typeof base === 'string' ? () => base : base;
  const jar = new Map<string, string>();
  const setCookies: string[] = [];
  let csrf = '';
  const send = async (method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<ConsoleAnswer> => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(baseOf() + path, { method, body, redirect: 'manual', headers: { ...(cookie ? { cookie } : {}), ...headers } });
    for (const line of res.headers.getSetCookie()) {
      setCookies.push(line);
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/Max-Age=0/i.test(line) || !value) jar.delete(name);
      else jar.set(name, value);
    }
    const text = await res.text();
    const token = CSRF_INPUT.exec(text)?.[1];
    if (token) csrf = token;
    return { status: res.status, headers: res.headers, text };
  };
  const agent: ConsoleAgent = {
    get: (path, headers = {}) => send('GET', path, undefined, headers),
    post(path, fields, options = {}) {
      const form = new URLSearchParams(fields);
      const token = options.csrf === undefined ? csrf : options.csrf;
      if (token !== false && token) form.set('csrf', token);
      return send('POST', path, form.toString(), { 'content-type': 'application/x-www-form-urlencoded', ...options.headers });
    },
    async follow(answer) {
      const location = answer.headers.get('location');
      if (answer.status !== 303 || !location) throw new Error(`expected a 303 redirect, got ${answer.status}: ${answer.text.slice(0, 300)}`);
      return agent.get(location);
    },
    async signIn(key, person = '', headers = {}) {
      await agent.get('/console/sign-in', headers);
      return agent.post('/console/sign-in', { key, person }, { headers });
    },
    setCookies,
    get csrf() {
      return csrf;
    },
  };
  return agent;
}

/** The text of a page without its markup, whitespace collapsed: what a person reads. */
export function visibleText(html: string): string {
  return html
    .replace(/<(script|style|title)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
