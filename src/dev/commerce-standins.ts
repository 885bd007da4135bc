import { startAftershipStandin } from './aftership-standin';
import { seedDemoTracking } from './aftership-standin-demo';
import { startShopifyStandin } from './shopify-standin';
import { seedDemoShop } from './shopify-standin-demo';

// The Shopify and AfterShip stand-ins started together and seeded with the demo shop, and the
// environment that points casework's adapters at them: what the stand-in demo and the tests
// that run investigations against the stand-ins start from.

/** The running stand-ins and the CASEWORK_SHOPIFY_* / CASEWORK_AFTERSHIP_* variables for them. */
export interface CommerceStandins {
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts both stand-ins on loopback, seeded with the demo shop. */
export async function startCommerceStandins(): Promise<CommerceStandins> {
  const shopify = await startShopifyStandin();
  const aftership = await startAftershipStandin();
  const customers = seedDemoShop(shopify);
  seedDemoTracking(aftership);
  return {
    env: {
      CASEWORK_SHOPIFY_STORE_DOMAIN: shopify.storeDomain,
      CASEWORK_SHOPIFY_ACCESS_TOKEN: shopify.accessToken,
      CASEWORK_SHOPIFY_API_VERSION: shopify.apiVersion,
      CASEWORK_SHOPIFY_API_BASE: shopify.url,
      CASEWORK_SHOPIFY_WEBHOOK_SECRET: shopify.webhookSecret,
      CASEWORK_SHOPIFY_CUSTOMERS: [...customers].map(([casework, gid]) => `${casework}=${gid}`).join(','),
      CASEWORK_AFTERSHIP_API_KEY: aftership.apiKey,
      CASEWORK_AFTERSHIP_API_BASE: aftership.url,
    },
    close: async () => {
      await Promise.all([shopify.close(), aftership.close()]);
    },
  };
}
