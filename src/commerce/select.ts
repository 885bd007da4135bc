import type { Pool } from 'pg';
import { ConfigError, type Config } from '../config';
import { demoOrders, demoPayments, demoPolicies, demoTickets, demoTracking } from './demo';
import type { PaymentProvider } from './payment-provider';
import type { Commerce, OrderSource, PolicySource, TicketSource, TrackingSource } from './shop';
import { createStripeProvider } from './stripe';

// Which adapter serves each part of the commerce port, chosen by configuration in this one
// place: CASEWORK_SHOP (orders, tickets, policies and the shop's own tracking), CASEWORK_PAYMENTS
// (charges and refunds), CASEWORK_TRACKING (courier scans). Each is a plain switch; an unknown
// name, or an adapter chosen without what it needs, fails at start naming the variable.

/** The shop's own parts: what CASEWORK_SHOP selects. */
type ShopParts = { orders: OrderSource; tickets: TicketSource; policies: PolicySource; tracking: TrackingSource };

/** Names each variable accepts (docs/commerce.md). */
export const SHOP_NAMES = ['demo'] as const;
export const PAYMENTS_NAMES = ['demo', 'stripe'] as const;
export const TRACKING_NAMES = ['shop'] as const;

function unknown(variable: string, value: string, names: readonly string[]): ConfigError {
  return new ConfigError(`${variable}: "${value}" is not one of ${names.join(', ')}`);
}

/** The value of a variable an adapter needs, or a ConfigError naming it and who needs it. */
function need(config: Config, variable: keyof Config, because: string): string {
  const value = config[variable];
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(`${variable} is required when ${because}`);
  return value;
}

function selectShop(config: Config, pool: Pool): ShopParts {
  switch (config.CASEWORK_SHOP) {
    case 'demo':
      return { orders: demoOrders(pool), tickets: demoTickets(pool), policies: demoPolicies(pool), tracking: demoTracking(pool) };
    default:
      throw unknown('CASEWORK_SHOP', config.CASEWORK_SHOP, SHOP_NAMES);
  }
}

/** The payment provider CASEWORK_PAYMENTS names (the server's webhook route needs it alone). */
export function selectPayments(config: Config, pool: Pool): PaymentProvider {
  switch (config.CASEWORK_PAYMENTS) {
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

function selectTracking(config: Config, shop: ShopParts): TrackingSource {
  switch (config.CASEWORK_TRACKING) {
    case 'shop':
      return shop.tracking;
    default:
      throw unknown('CASEWORK_TRACKING', config.CASEWORK_TRACKING, TRACKING_NAMES);
  }
}

/** Every part of the commerce port as configuration chooses; throws ConfigError at start when one cannot be built. */
export function selectCommerce(config: Config, pool: Pool): Commerce {
  const shop = selectShop(config, pool);
  return { orders: shop.orders, tickets: shop.tickets, policies: shop.policies, tracking: selectTracking(config, shop), payments: selectPayments(config, pool) };
}

/** One line for the start-up log: which adapter serves what. */
export function describeCommerce(config: Config): string {
  return `shop ${config.CASEWORK_SHOP}, payments ${config.CASEWORK_PAYMENTS}, tracking ${config.CASEWORK_TRACKING}`;
}
