import { ConfigError } from '../../config';

// What the Shopify adapters need, read from the environment. Unset, Shopify is not configured;
// half set (a domain without a token, a token without a domain), the process refuses to start
// naming the missing variable, so a shop is never half connected.

/** The Admin API version casework's queries are written for (Shopify supports each for a year). */
export const SHOPIFY_API_VERSION = '2026-10';

/** What the Shopify order source and payment provider need. */
export interface ShopifySettings {
  /** The shop's myshopify.com domain, e.g. cartwise.myshopify.com. */
  storeDomain: string;
  /** An Admin API access token (a custom app's shpat_… token). Secret. */
  accessToken: string;
  apiVersion: string;
  /** The app's client secret, which signs its webhooks (X-Shopify-Hmac-Sha256): refunds/create tells casework of a refund that failed later. */
  webhookSecret?: string;
  /** Where the Admin API is; unset, the shop's own domain. The stand-in's URL in tests and the stand-in demo. */
  apiBase?: string;
  /**
   * casework customer id -> Shopify customer GID. A casework id not listed here is taken as the
   * Shopify customer's own id (its GID or numeric id), as when the desk's external id is the shop's.
   */
  customers: ReadonlyMap<string, string>;
  /** What the shop puts before its order numbers (Shopify's default "#"): casework's order id "5102" is the order named "#5102". */
  orderNamePrefix: string;
  /** The longest throttle wait taken inside one call; longer, the call fails as unavailable and the case goes to a person. */
  maxThrottleWaitMs: number;
  timeoutMs: number;
}

const SHOPIFY_GID = /^gid:\/\/shopify\/Customer\/\d+$/;

/** A Shopify customer id as its GID: "7405628113" and "gid://shopify/Customer/7405628113" alike; undefined for anything else. */
export function shopifyCustomerGid(id: string): string | undefined {
  if (SHOPIFY_GID.test(id)) return id;
  return /^\d+$/.test(id) ? `gid://shopify/Customer/${id}` : undefined;
}

/** Parses "C-1001=gid://shopify/Customer/1,C-1002=2" into casework id -> Shopify customer GID; throws naming the entry that is wrong. */
export function parseShopifyCustomers(spec: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const match = /^([A-Za-z0-9_.:@-]{1,100})=(\S+)$/.exec(entry);
    const gid = match ? shopifyCustomerGid(match[2]!) : undefined;
    if (!match || !gid) throw new ConfigError(`CASEWORK_SHOPIFY_CUSTOMERS: "${entry}" is not <casework customer id>=<Shopify customer id or gid://shopify/Customer/…>`);
    map.set(match[1]!, gid);
  }
  return map;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${name}: "${raw}" is not a whole number of milliseconds`);
  return value;
}

/**
 * The Shopify settings from the environment, or undefined when no CASEWORK_SHOPIFY_* variable is
 * set. Throws ConfigError naming the variable when one is missing or wrong.
 */
export function shopifySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ShopifySettings | undefined {
  const set = Object.keys(env).filter((key) => key.startsWith('CASEWORK_SHOPIFY_') && env[key] !== undefined && env[key] !== '');
  if (set.length === 0) return undefined;
  const storeDomain = env.CASEWORK_SHOPIFY_STORE_DOMAIN?.trim();
  const accessToken = env.CASEWORK_SHOPIFY_ACCESS_TOKEN?.trim();
  if (!storeDomain) throw new ConfigError(`CASEWORK_SHOPIFY_STORE_DOMAIN is required when ${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set`);
  if (!accessToken) throw new ConfigError(`CASEWORK_SHOPIFY_ACCESS_TOKEN is required when CASEWORK_SHOPIFY_STORE_DOMAIN is set`);
  if (!/^[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)+$/i.test(storeDomain)) {
    throw new ConfigError(`CASEWORK_SHOPIFY_STORE_DOMAIN: "${storeDomain}" is not a shop domain (e.g. cartwise.myshopify.com, no scheme)`);
  }
  const apiVersion = env.CASEWORK_SHOPIFY_API_VERSION?.trim() || SHOPIFY_API_VERSION;
  if (!/^(\d{4}-(01|04|07|10)|unstable)$/.test(apiVersion))
    throw new ConfigError(`CASEWORK_SHOPIFY_API_VERSION: "${apiVersion}" is not a Shopify API version (e.g. ${SHOPIFY_API_VERSION})`);
  const webhookSecret = env.CASEWORK_SHOPIFY_WEBHOOK_SECRET?.trim() || undefined;
  const apiBase = env.CASEWORK_SHOPIFY_API_BASE?.trim() || undefined;
  if (apiBase && !/^https?:\/\/[^/]+$/.test(apiBase)) throw new ConfigError(`CASEWORK_SHOPIFY_API_BASE: "${apiBase}" is not an http(s) origin (e.g. http://127.0.0.1:8787)`);
  return {
    storeDomain,
    accessToken,
    apiVersion,
    ...(apiBase ? { apiBase } : {}),
    ...(webhookSecret ? { webhookSecret } : {}),
    customers: parseShopifyCustomers(env.CASEWORK_SHOPIFY_CUSTOMERS ?? ''),
    orderNamePrefix: env.CASEWORK_SHOPIFY_ORDER_PREFIX ?? '#',
    maxThrottleWaitMs: positiveInt(env, 'CASEWORK_SHOPIFY_MAX_THROTTLE_WAIT_MS', 3_000),
    timeoutMs: positiveInt(env, 'CASEWORK_SHOPIFY_TIMEOUT_MS', 10_000),
  };
}
