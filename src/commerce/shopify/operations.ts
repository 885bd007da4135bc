// The GraphQL Admin API operations casework sends, and the shapes of their answers. Each asks only
// for what the tools read, so a query's cost (and its share of the shop's throttle) stays small.
// The stand-in (src/dev/shopify-standin.ts) answers exactly these.

/** A MoneyBag's shop-currency amount. */
export interface ShopMoney {
  shopMoney: { amount: string; currencyCode: string };
}

export interface ShopifyFulfillment {
  createdAt: string;
  displayStatus: string | null;
  trackingInfo: { company: string | null; number: string | null }[];
}

export interface ShopifyOrderNode {
  id: string;
  name: string;
  createdAt: string;
  cancelledAt: string | null;
  note: string | null;
  displayFinancialStatus: string | null;
  displayFulfillmentStatus: string;
  customer: { id: string } | null;
  totalPriceSet: ShopMoney;
  shippingAddress: {
    address1: string | null;
    address2: string | null;
    city: string | null;
    province: string | null;
    zip: string | null;
    latitude: number | null;
    longitude: number | null;
  } | null;
  lineItems: { nodes: { name: string; quantity: number; originalUnitPriceSet: ShopMoney }[] };
  fulfillments: ShopifyFulfillment[];
}

const ORDER_FIELDS = `
  id name createdAt cancelledAt note displayFinancialStatus displayFulfillmentStatus
  customer { id }
  totalPriceSet { shopMoney { amount currencyCode } }
  shippingAddress { address1 address2 city province zip latitude longitude }
  lineItems(first: 25) { nodes { name quantity originalUnitPriceSet { shopMoney { amount currencyCode } } } }
  fulfillments(first: 5) { createdAt displayStatus trackingInfo(first: 3) { company number } }`;

/** One order by its GID. */
export const ORDER_BY_ID = `query CaseworkOrder($id: ID!) {
  order(id: $id) {${ORDER_FIELDS}
  }
}`;

/** Orders by a search query (`name:"#5102"`): an order's name is unique in a shop. */
export const ORDER_BY_NAME = `query CaseworkOrderByName($query: String!) {
  orders(first: 2, query: $query) {
    nodes {${ORDER_FIELDS}
    }
  }
}`;

export interface ShopifyOrderSummaryNode {
  id: string;
  name: string;
  createdAt: string;
  cancelledAt: string | null;
  displayFinancialStatus: string | null;
  displayFulfillmentStatus: string;
  totalPriceSet: ShopMoney;
  fulfillments: ShopifyFulfillment[];
}

/** A page of a customer's orders, newest first, and how many they have. */
export const CUSTOMER_ORDERS = `query CaseworkCustomerOrders($id: ID!, $first: Int!, $after: String) {
  customer(id: $id) {
    numberOfOrders
    orders(first: $first, after: $after, sortKey: CREATED_AT, reverse: true) {
      pageInfo { hasNextPage endCursor }
      nodes {
        id name createdAt cancelledAt displayFinancialStatus displayFulfillmentStatus
        totalPriceSet { shopMoney { amount currencyCode } }
        fulfillments(first: 5) { createdAt displayStatus trackingInfo(first: 1) { company number } }
      }
    }
  }
}`;

export interface ShopifyTransaction {
  id: string;
  kind: string;
  status: string;
  gateway: string | null;
  createdAt: string;
  errorCode: string | null;
  amountSet: ShopMoney;
  parentTransaction: { id: string } | null;
}

export interface ShopifyRefund {
  id: string;
  createdAt: string;
  note: string | null;
  transactions: { nodes: ShopifyTransaction[] };
}

const TRANSACTION_FIELDS = `id kind status gateway createdAt errorCode amountSet { shopMoney { amount currencyCode } } parentTransaction { id }`;
const REFUND_FIELDS = `id createdAt note transactions(first: 10) { nodes { ${TRANSACTION_FIELDS} } }`;

export interface ShopifyPaymentsNode {
  id: string;
  name: string;
  customer: { id: string } | null;
  transactions: ShopifyTransaction[];
  /** Each refund's note (where casework writes its metadata) and which transactions it holds. */
  refunds: { id: string; note: string | null; transactions: { nodes: { id: string }[] } }[];
}

/** An order's transactions (charges and refunds; 25 cover any order casework investigates) and the notes casework wrote on its refunds. */
export const ORDER_PAYMENTS = `query CaseworkOrderPayments($id: ID!) {
  order(id: $id) {
    id name customer { id }
    transactions(first: 25) { ${TRANSACTION_FIELDS} }
    refunds(first: 10) { id note transactions(first: 5) { nodes { id } } }
  }
}`;

/** The order GIDs for an order name, for the payment reads that start from casework's order id. */
export const ORDER_ID_BY_NAME = `query CaseworkOrderId($query: String!) {
  orders(first: 2, query: $query) { nodes { id name customer { id } } }
}`;

export interface ShopifyChargeNode {
  id: string;
  kind: string;
  status: string;
  gateway: string | null;
  amountSet: ShopMoney;
  order: { id: string } | null;
}

/** The transaction a refund is against: its order and gateway, which refundCreate needs. */
export const TRANSACTION = `query CaseworkTransaction($id: ID!) {
  node(id: $id) {
    ... on OrderTransaction { id kind status gateway amountSet { shopMoney { amount currencyCode } } order { id } }
  }
}`;

/**
 * A refund of one transaction, made once under the approval's key: Shopify's @idempotent
 * directive (mandatory on refundCreate from 2026-04) makes a repeat with the same key and the
 * same input answer with the refund already made.
 */
export const REFUND_CREATE = `mutation CaseworkRefund($input: RefundInput!, $idempotencyKey: String!) {
  refundCreate(input: $input) @idempotent(key: $idempotencyKey) {
    refund { ${REFUND_FIELDS} }
    userErrors { field message }
  }
}`;
