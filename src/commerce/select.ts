import type { Pool } from 'pg';
import { ConfigError, type Config } from '../config';
import { demoOrders, demoPayments, demoPolicies, demoTickets, demoTracking } from './demo';
import type { PaymentProvider } from './payment-provider';
import type { Commerce, OrderSource, PolicySource, TicketSource, TrackingSource } from './shop';
import { aftershipSettingsFromEnv } from './aftership/settings';
import { createAftershipTrackingSource } from './aftership/tracking';
import { createShopifyGraphql, type ShopifyGraphql } from './shopify/graphql';
import { createShopifyOrderSource, type ShopifyOrderSource } from './shopify/orders';
import { createShopifyPaymentProvider } from './shopify/payments';
import { shopifySettingsFromEnv, type ShopifySettings } from './shopify/settings';
import { createStripeProvider } from './stripe';

// Which adapter serves each part of the commerce port, chosen by configuration in this one
// place: CASEWORK_SHOP (orders, tickets, policies and the shop's own tracking), CASEWORK_PAYMENTS
// (charges and refunds), CASEWORK_TRACKING (courier scans). Each is a plain switch; an unknown
// name, or an adapter chosen without what it needs, fails at start naming the variable.

/** The shop's own parts: what CASEWORK_SHOP selects (a shop that keeps no courier scans, as Shopify, has no tracking of its own). */
type ShopParts = { orders: OrderSource; tickets: TicketSource; policies: PolicySource; tracking?: TrackingSource; shopify?: ShopifyOrderSource };

/** One Shopify connection per process, shared by its order source and payment provider (one cost bucket). */
interface Shopify {
  settings: ShopifySettings;
  graphql: ShopifyGraphql;
}

function shopifyOf(because: string, env: NodeJS.ProcessEnv): Shopify {
  const settings = shopifySettingsFromEnv(env);
  if (!settings) throw new ConfigError(`CASEWORK_SHOPIFY_STORE_DOMAIN and CASEWORK_SHOPIFY_ACCESS_TOKEN are required when ${because}`);
  return { settings, graphql: createShopifyGraphql(settings) };
}

/** Names each variable accepts (docs/commerce.md). */
export const SHOP_NAMES = ['demo', 'shopify'] as const;
export const PAYMENTS_NAMES = ['demo', 'stripe', 'shopify'] as const;
export const TRACKING_NAMES = ['shop', 'aftership'] as const;

function unknown(variable: string, value: string, names: readonly string[]): ConfigError {
  return new ConfigError(`${variable}: "${value}" is not one of ${names.join(', ')}`);
}

/** The value of a variable an adapter needs, or a ConfigError naming it and who needs it. */
function need(config: Config, variable: keyof Config, because: string): string {
  const value = config[variable];
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(`${variable} is required when ${because}`);
  return value;
}

function selectShop(config: Config, pool: Pool, shopify: () => Shopify): ShopParts {
  switch (config.CASEWORK_SHOP) {
    case 'demo':
      return { orders: demoOrders(pool), tickets: demoTickets(pool), policies: demoPolicies(pool), tracking: demoTracking(pool) };
    case 'shopify': {
      // Orders from Shopify; earlier tickets and policies stay in casework's tables (docs/commerce.md).
      const { settings, graphql } = shopify();
      const orders = createShopifyOrderSource(settings, graphql);
      return { orders, tickets: demoTickets(pool), policies: demoPolicies(pool), shopify: orders };
    }
    default:
      throw unknown('CASEWORK_SHOP', config.CASEWORK_SHOP, SHOP_NAMES);
  }
}

/** The payment provider CASEWORK_PAYMENTS names (the server's webhook route needs it alone). */
export function selectPayments(config: Config, pool: Pool, shopify: () => Shopify = once(() => shopifyOf('CASEWORK_PAYMENTS is shopify', process.env))): PaymentProvider {
  switch (config.CASEWORK_PAYMENTS) {
    case 'shopify': {
      const { settings, graphql } = shopify();
      return createShopifyPaymentProvider(settings, graphql);
    }
    case 'demo':
      return demoPayments(pool);
    case 'stripe':
      return createStripeProvider({
        secretKey: need(config, 'CASEWORK_STRIPE_SECRET_KEY', 'CASEWORK_PAYMENTS is stripe'),
        // Without it a refund that fails after Stripe accepted it would reach no one.
        webhookSecret: need(config, 'CASEWORK_STRIPE_WEBHOOK_SECRET', 'CASEWORK_PAYMENTS is stripe (a refund that fails later is reported by its webhook)'),
        ...(config.CASEWORK_STRIPE_API_BASE ? { apiBase: config.CASEWORK_STRIPE_API_BASE } : {}),
        timeoutMs: config.CASEWORK_STRIPE_TIMEOUT_MS,
      });
    default:
      throw unknown('CASEWORK_PAYMENTS', config.CASEWORK_PAYMENTS, PAYMENTS_NAMES);
  }
}

function selectTracking(config: Config, shop: ShopParts, env: NodeJS.ProcessEnv): TrackingSource {
  switch (config.CASEWORK_TRACKING) {
    case 'shop':
      if (!shop.tracking) throw new ConfigError(`CASEWORK_TRACKING: the ${config.CASEWORK_SHOP} shop keeps no courier scans; set CASEWORK_TRACKING=aftership`);
      return shop.tracking;
    case 'aftership': {
      const settings = aftershipSettingsFromEnv(env);
      if (!settings) throw new ConfigError('CASEWORK_AFTERSHIP_API_KEY is required when CASEWORK_TRACKING is aftership');
      return createAftershipTrackingSource(settings, shop.shopify ? { trackingNumbers: shop.shopify.trackingNumbers.bind(shop.shopify) } : {});
    }
    default:
      throw unknown('CASEWORK_TRACKING', config.CASEWORK_TRACKING, TRACKING_NAMES);
  }
}

/** Every part of the commerce port as configuration chooses; throws ConfigError at start when one cannot be built. */
export function selectCommerce(config: Config, pool: Pool, env: NodeJS.ProcessEnv = process.env): Commerce {
  const shopify = once(() => shopifyOf(`CASEWORK_SHOP or CASEWORK_PAYMENTS is shopify`, env));
  const shop = selectShop(config, pool, shopify);
  return { orders: shop.orders, tickets: shop.tickets, policies: shop.policies, tracking: selectTracking(config, shop, env), payments: selectPayments(config, pool, shopify) };
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** One line for the start-up log: which adapter serves what. */
export function describeCommerce(config: Config): string {
  const desks = config.CASEWORK_DESKS.split(',')
    .map((d) => d.trim())
    .filter((d) => d && d !== 'webhook');
  const tickets = desks.length ? `earlier tickets from the ticket's desk (${desks.join(', ')}), else the shop` : 'earlier tickets from the shop';
  return `shop ${config.CASEWORK_SHOP}, payments ${config.CASEWORK_PAYMENTS}, tracking ${config.CASEWORK_TRACKING}, ${tickets}`;
}
