import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  execute,
  GraphQLError,
  Kind,
  OperationTypeNode,
  parse,
  validate,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLResolveInfo,
  type OperationDefinitionNode,
} from 'graphql';
import { decimalToMinor, minorToDecimal } from '../context/money';
import { actualCost, MAX_QUERY_COST, requestedCost, STANDIN_SCHEMA } from './shopify-standin-schema';

// A test double of Shopify's GraphQL Admin API for the operations casework sends, as strict as
// Shopify's documentation: POST /admin/api/<version>/graphql.json with X-Shopify-Access-Token
// (401 without it), each document parsed and validated against Shopify's own names
// (shopify-standin-schema.ts) so an unknown field, argument or operation is refused with errors
// in Shopify's shape; the calculated query cost charged against a leaky bucket (the
// requested cost taken before the query runs, the part it did not use given back after), with
// extensions.cost on every answer and a THROTTLED error (HTTP 200, no data) when the bucket
// cannot pay; refundCreate only with the @idempotent directive, a repeated key with the same input
// answered from the refund already made and with other input refused
// (IDEMPOTENCY_KEY_PARAMETER_MISMATCH), kept 24 hours. Faults on demand: a lost response after
// the work was done, a 503. Nothing reaches Shopify: it listens on loopback only.

/** A money amount as Shopify's Decimal writes it: "109.98", "45.0". */
function decimal(minor: number, currency: string): string {
  const text = minorToDecimal(minor, currency);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '.0') : `${text}.0`;
}

const moneyBag = (minor: number, currency: string) => {
  const money = { amount: decimal(minor, currency), currencyCode: currency };
  return { shopMoney: money, presentmentMoney: money };
};

/** A transaction the stand-in holds. */
export interface StandinTransaction {
  id: string;
  orderId: string;
  kind: 'SALE' | 'CAPTURE' | 'AUTHORIZATION' | 'REFUND' | 'VOID';
  status: 'SUCCESS' | 'PENDING' | 'FAILURE' | 'ERROR';
  gateway: string;
  createdAt: string;
  errorCode: string | null;
  amountMinor: number;
  parentId: string | null;
}

/** A refund the stand-in holds. */
export interface StandinRefund {
  id: string;
  orderId: string;
  createdAt: string;
  note: string | null;
  transactionIds: string[];
}

/** An order the stand-in holds. */
export interface StandinOrder {
  id: string;
  name: string;
  customerId: string | null;
  createdAt: string;
  cancelledAt: string | null;
  note: string | null;
  currency: string;
  lines: { name: string; quantity: number; unitMinor: number }[];
  address: {
    address1: string | null;
    address2: string | null;
    city: string | null;
    province: string | null;
    zip: string | null;
    country: string | null;
    latitude: number | null;
    longitude: number | null;
  } | null;
  fulfillments: { id: string; createdAt: string; displayStatus: string; tracking: { company: string | null; number: string | null }[] }[];
}

/** What adding an order takes: charges are made as successful Shopify Payments sales unless said otherwise. */
export interface StandinOrderInput {
  name: string;
  customerId: string | null;
  createdAt: string;
  currency: string;
  lines: { name: string; quantity: number; unitMinor: number }[];
  address?: StandinOrder['address'];
  note?: string | null;
  cancelledAt?: string | null;
  fulfillments?: { createdAt: string; displayStatus: string; company: string | null; number: string | null }[];
  charges?: { amountMinor: number; createdAt: string; gateway?: string; kind?: 'SALE' | 'AUTHORIZATION' }[];
}

/** A fault the next matching request meets. */
export type ShopifyFault =
  /** The request is carried out, then the connection is cut before the answer. */
  | { kind: 'lose_response' }
  /** 503 with no body the client can read as GraphQL. */
  | { kind: 'unavailable' };

/** The running stand-in. */
export interface ShopifyStandin {
  /** Origin of the server, for ShopifySettings.apiBase. */
  url: string;
  storeDomain: string;
  accessToken: string;
  apiVersion: string;
  /** The app's client secret, signing webhooks (X-Shopify-Hmac-Sha256). */
  webhookSecret: string;
  addCustomer(email: string): string;
  addOrder(input: StandinOrderInput): StandinOrder;
  /** Records a refund made earlier (outside casework) of one charge. */
  addRefund(input: { parentId: string; amountMinor: number; createdAt: string; note?: string | null }): StandinRefund;
  order(id: string): StandinOrder | undefined;
  transactions(orderId?: string): StandinTransaction[];
  refunds(orderId?: string): StandinRefund[];
  /** The leaky bucket's state now. */
  throttleStatus(): { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
  /** Sets the bucket: what is available now, and optionally the restore rate (points per second). */
  setBucket(currentlyAvailable: number, restoreRate?: number): void;
  /** Queues a fault for the next mutation (or, with `operation: 'query'`, the next query). */
  fault(fault: ShopifyFault, operation?: 'query' | 'mutation'): void;
  /** Requests seen: operation kind, its name, and whether it was throttled. */
  requests(): { operation: string; name: string | null; throttled: boolean }[];
  /** Marks a refund transaction failed later, as a bank can, and returns the signed refunds/create webhook body for it. */
  failRefund(transactionId: string, errorCode?: string): { body: string; hmac: string };
  close(): Promise<void>;
}

/** Options: the bucket's size and restore rate (Shopify's standard plan restores 100 points a second). */
export interface ShopifyStandinOptions {
  maximumAvailable?: number;
  restoreRate?: number;
  apiVersion?: string;
}

/** How long Shopify keeps an idempotency key. */
const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function shopifyError(message: string, code: string, extra: Record<string, unknown> = {}) {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

/** Shopify's wording for graphql-js validation messages it words differently. */
function shopifyMessage(error: GraphQLError): { message: string; extensions: Record<string, unknown> } {
  const field = /^Cannot query field "(\w+)" on type "(\w+)"/.exec(error.message);
  if (field) return { message: `Field '${field[1]}' doesn't exist on type '${field[2]}'`, extensions: { code: 'undefinedField', typeName: field[2], fieldName: field[1] } };
  const argument = /^Unknown argument "(\w+)" on field "(\w+)\.(\w+)"/.exec(error.message);
  if (argument)
    return {
      message: `Field '${argument[3]}' doesn't accept argument '${argument[1]}'`,
      extensions: { code: 'argumentNotAccepted', name: argument[3], argumentName: argument[1] },
    };
  return { message: error.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } };
}

/** Starts the stand-in on a free loopback port. */
export async function startShopifyStandin(options: ShopifyStandinOptions = {}): Promise<ShopifyStandin> {
  const apiVersion = options.apiVersion ?? '2026-10';
  const accessToken = `shpat_${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 32)}`;
  const webhookSecret = createHash('sha256').update(`secret${Math.random()}`).digest('hex').slice(0, 32);
  const storeDomain = 'cartwise-standin.myshopify.com';
  let seq = 1000;
  const nextId = () => ++seq;
  const customers = new Map<string, { id: string; email: string }>();
  const orders = new Map<string, StandinOrder>();
  const transactions = new Map<string, StandinTransaction>();
  const refunds = new Map<string, StandinRefund>();
  const idempotency = new Map<string, { inputHash: string; refundId: string | null; at: number; inFlight: boolean }>();
  const faults: { fault: ShopifyFault; operation: 'query' | 'mutation' }[] = [];
  const seen: { operation: string; name: string | null; throttled: boolean }[] = [];
  const bucket = { maximumAvailable: options.maximumAvailable ?? 2_000, restoreRate: options.restoreRate ?? 100, available: options.maximumAvailable ?? 2_000, at: Date.now() };

  const refill = () => {
    const now = Date.now();
    bucket.available = Math.min(bucket.maximumAvailable, bucket.available + ((now - bucket.at) / 1000) * bucket.restoreRate);
    bucket.at = now;
  };
  const throttleStatus = () => {
    refill();
    return { maximumAvailable: bucket.maximumAvailable, currentlyAvailable: Math.floor(bucket.available), restoreRate: bucket.restoreRate };
  };

  const orderTransactions = (orderId: string) => [...transactions.values()].filter((t) => t.orderId === orderId);
  const captured = (orderId: string, parentId?: string) =>
    orderTransactions(orderId)
      .filter((t) => (t.kind === 'SALE' || t.kind === 'CAPTURE') && t.status === 'SUCCESS' && (!parentId || t.id === parentId))
      .reduce((sum, t) => sum + t.amountMinor, 0);
  const refunded = (orderId: string, parentId?: string) =>
    orderTransactions(orderId)
      .filter((t) => t.kind === 'REFUND' && (t.status === 'SUCCESS' || t.status === 'PENDING') && (!parentId || t.parentId === parentId))
      .reduce((sum, t) => sum + t.amountMinor, 0);

  // ---- The objects GraphQL resolves: plain values, and functions for fields with arguments.
  const first = (args: { first?: number }, list: unknown[]) => list.slice(0, args.first ?? list.length);
  const page = <T>(all: T[], args: { first?: number; after?: string }) => {
    const start = args.after ? Number(Buffer.from(args.after, 'base64').toString('utf8')) + 1 : 0;
    const items = all.slice(start, start + (args.first ?? 50));
    const cursor = (i: number) => Buffer.from(String(start + i)).toString('base64');
    return {
      nodes: items,
      edges: items.map((node, i) => ({ node, cursor: cursor(i) })),
      pageInfo: {
        hasNextPage: start + items.length < all.length,
        hasPreviousPage: start > 0,
        startCursor: items.length ? cursor(0) : null,
        endCursor: items.length ? cursor(items.length - 1) : null,
      },
    };
  };

  function transactionView(t: StandinTransaction): Record<string, unknown> {
    const order = orders.get(t.orderId)!;
    return {
      __typename: 'OrderTransaction',
      id: t.id,
      kind: t.kind,
      status: t.status,
      gateway: t.gateway,
      createdAt: t.createdAt,
      processedAt: t.createdAt,
      errorCode: t.errorCode,
      amountSet: moneyBag(t.amountMinor, order.currency),
      parentTransaction: () => (t.parentId ? transactionView(transactions.get(t.parentId)!) : null),
      order: () => orderView(order),
    };
  }

  function refundView(r: StandinRefund): Record<string, unknown> {
    const order = orders.get(r.orderId)!;
    const list = r.transactionIds.map((id) => transactions.get(id)!);
    return {
      __typename: 'Refund',
      id: r.id,
      createdAt: r.createdAt,
      note: r.note,
      totalRefundedSet: moneyBag(
        list.filter((t) => t.status === 'SUCCESS').reduce((sum, t) => sum + t.amountMinor, 0),
        order.currency,
      ),
      transactions: (args: { first?: number; after?: string }) => page(list.map(transactionView), args),
    };
  }

  function financialStatus(order: StandinOrder): string {
    const paid = captured(order.id);
    const back = refunded(order.id);
    if (paid === 0) return orderTransactions(order.id).some((t) => t.kind === 'AUTHORIZATION' && t.status === 'SUCCESS') ? 'AUTHORIZED' : 'PENDING';
    if (back >= paid) return 'REFUNDED';
    return back > 0 ? 'PARTIALLY_REFUNDED' : 'PAID';
  }

  function orderView(order: StandinOrder): Record<string, unknown> {
    return {
      __typename: 'Order',
      id: order.id,
      name: order.name,
      createdAt: order.createdAt,
      cancelledAt: order.cancelledAt,
      note: order.note,
      currencyCode: order.currency,
      displayFinancialStatus: () => financialStatus(order),
      displayFulfillmentStatus: order.fulfillments.some((f) => f.displayStatus !== 'CANCELED') ? 'FULFILLED' : 'UNFULFILLED',
      customer: () => (order.customerId ? customerView(order.customerId) : null),
      totalPriceSet: moneyBag(
        order.lines.reduce((sum, l) => sum + l.quantity * l.unitMinor, 0),
        order.currency,
      ),
      shippingAddress: order.address,
      lineItems: (args: { first?: number; after?: string }) =>
        page(
          order.lines.map((l, i) => ({
            __typename: 'LineItem',
            id: `gid://shopify/LineItem/${order.id.split('/').pop()}${i}`,
            name: l.name,
            quantity: l.quantity,
            originalUnitPriceSet: moneyBag(l.unitMinor, order.currency),
          })),
          args,
        ),
      fulfillments: (args: { first?: number }) =>
        first(
          args,
          order.fulfillments.map((f) => ({
            __typename: 'Fulfillment',
            id: f.id,
            createdAt: f.createdAt,
            displayStatus: f.displayStatus,
            trackingInfo: (a: { first?: number }) => first(a, f.tracking),
          })),
        ),
      transactions: (args: { first?: number }) => first(args, orderTransactions(order.id).map(transactionView)),
      refunds: (args: { first?: number }) => first(args, [...refunds.values()].filter((r) => r.orderId === order.id).map(refundView)),
    };
  }

  function customerView(id: string): Record<string, unknown> | null {
    if (!customers.has(id)) return null;
    const own = () => [...orders.values()].filter((o) => o.customerId === id);
    return {
      __typename: 'Customer',
      id,
      numberOfOrders: String(own().length),
      orders: (args: { first?: number; after?: string; reverse?: boolean; sortKey?: string; query?: string }) => {
        if (args.query) throw shopifyError('the stand-in answers customer orders without a search query', 'BAD_REQUEST');
        const sorted = own().sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
        return page((args.reverse ? sorted.reverse() : sorted).map(orderView), args);
      },
    };
  }

  /** Shopify's order search, for the syntax casework sends: name:"#5102" (or name:#5102). */
  function searchOrders(query: string | undefined): StandinOrder[] {
    if (!query) return [...orders.values()];
    const match = /^name:(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))$/.exec(query.trim());
    if (!match) throw shopifyError(`the stand-in answers name: searches only, not "${query}"`, 'BAD_REQUEST');
    const name = match[1] !== undefined ? (JSON.parse(`"${match[1]}"`) as string) : (match[2] ?? match[3]!);
    // Matched loosely (with or without the prefix), as a search is: the adapter compares names exactly.
    return [...orders.values()].filter((o) => o.name === name || o.name.replace(/^#/, '') === name.replace(/^#/, ''));
  }

  function nodeView(id: string): Record<string, unknown> | null {
    if (orders.has(id)) return orderView(orders.get(id)!);
    if (transactions.has(id)) return transactionView(transactions.get(id)!);
    if (refunds.has(id)) return refundView(refunds.get(id)!);
    return customerView(id);
  }

  /** The key of the @idempotent directive on the field being resolved, if any. */
  function idempotencyKeyOf(info: GraphQLResolveInfo): string | undefined {
    const directive = info.fieldNodes[0]?.directives?.find((d) => d.name.value === 'idempotent');
    const value = directive?.arguments?.find((a) => a.name.value === 'key')?.value;
    if (!value) return undefined;
    if (value.kind === Kind.STRING) return value.value;
    if (value.kind === Kind.VARIABLE) {
      const v = info.variableValues[value.name.value];
      return typeof v === 'string' ? v : undefined;
    }
    return undefined;
  }

  type RefundInput = {
    orderId: string;
    note?: string | null;
    notify?: boolean;
    currency?: string;
    allowOverRefunding?: boolean;
    transactions?: { amount: string; gateway: string; kind: string; orderId: string; parentId?: string | null }[];
  };

  function createRefund(input: RefundInput): { refund: StandinRefund | null; userErrors: { field: string[] | null; message: string }[] } {
    const order = orders.get(input.orderId);
    if (!order) return { refund: null, userErrors: [{ field: ['orderId'], message: 'Order does not exist' }] };
    const lines = input.transactions ?? [];
    if (lines.length === 0) return { refund: null, userErrors: [{ field: ['transactions'], message: 'the stand-in makes refunds from transactions only; none were given' }] };
    const made: StandinTransaction[] = [];
    for (const [i, line] of lines.entries()) {
      const field = (name: string) => ['transactions', String(i), name];
      const parent = line.parentId ? transactions.get(line.parentId) : undefined;
      if (line.kind !== 'REFUND') return { refund: null, userErrors: [{ field: field('kind'), message: 'Kind must be refund' }] };
      if (line.orderId !== order.id) return { refund: null, userErrors: [{ field: field('orderId'), message: 'Transaction order does not match the refunded order' }] };
      if (!parent || parent.orderId !== order.id || !(parent.kind === 'SALE' || parent.kind === 'CAPTURE') || parent.status !== 'SUCCESS') {
        return { refund: null, userErrors: [{ field: field('parentId'), message: 'Parent transaction could not be found or cannot be refunded' }] };
      }
      if (line.gateway !== parent.gateway)
        return { refund: null, userErrors: [{ field: field('gateway'), message: `Gateway must be ${parent.gateway}, the parent transaction's` }] };
      let amount: number;
      try {
        amount = decimalToMinor(line.amount, order.currency);
      } catch {
        return { refund: null, userErrors: [{ field: field('amount'), message: 'Amount is invalid' }] };
      }
      if (amount <= 0) return { refund: null, userErrors: [{ field: field('amount'), message: 'Amount must be greater than 0' }] };
      const left = parent.amountMinor - refunded(order.id, parent.id) - made.filter((t) => t.parentId === parent.id).reduce((s, t) => s + t.amountMinor, 0);
      if (amount > left && !input.allowOverRefunding) {
        return {
          refund: null,
          userErrors: [
            { field: field('amount'), message: `Refund amount ${decimal(amount, order.currency)} is greater than the refundable amount ${decimal(left, order.currency)}` },
          ],
        };
      }
      made.push({
        id: `gid://shopify/OrderTransaction/${nextId()}`,
        orderId: order.id,
        kind: 'REFUND',
        status: 'SUCCESS',
        gateway: parent.gateway,
        createdAt: new Date().toISOString(),
        errorCode: null,
        amountMinor: amount,
        parentId: parent.id,
      });
    }
    for (const t of made) transactions.set(t.id, t);
    const refund: StandinRefund = {
      id: `gid://shopify/Refund/${nextId()}`,
      orderId: order.id,
      createdAt: new Date().toISOString(),
      note: input.note ?? null,
      transactionIds: made.map((t) => t.id),
    };
    refunds.set(refund.id, refund);
    return { refund, userErrors: [] };
  }

  const rootValue = {
    order: ({ id }: { id: string }) => (orders.has(id) ? orderView(orders.get(id)!) : null),
    orders: (args: { first?: number; after?: string; reverse?: boolean; query?: string }) => {
      const sorted = searchOrders(args.query).sort((a, b) => Number(a.id.split('/').pop()) - Number(b.id.split('/').pop()));
      return page((args.reverse ? sorted.reverse() : sorted).map(orderView), args);
    },
    customer: ({ id }: { id: string }) => customerView(id),
    node: ({ id }: { id: string }) => nodeView(id),
    refundCreate: ({ input }: { input: RefundInput }, _context: unknown, info: GraphQLResolveInfo) => {
      const key = idempotencyKeyOf(info);
      if (!key) throw shopifyError('The @idempotent directive is required for this mutation.', 'BAD_REQUEST');
      const inputHash = createHash('sha256').update(canonical(input)).digest('hex');
      const earlier = idempotency.get(key);
      if (earlier && Date.now() - earlier.at < IDEMPOTENCY_RETENTION_MS) {
        if (earlier.inputHash !== inputHash)
          throw shopifyError('The same idempotency key cannot be used with different operation parameters.', 'IDEMPOTENCY_KEY_PARAMETER_MISMATCH');
        if (earlier.inFlight) throw shopifyError('This request is currently in progress, please try again.', 'IDEMPOTENCY_CONCURRENT_REQUEST');
        // The answer is built from the refund as it is now, as Shopify documents.
        const refund = earlier.refundId ? refunds.get(earlier.refundId)! : null;
        return { refund: refund ? refundView(refund) : null, order: orderView(orders.get(input.orderId)!), userErrors: [] };
      }
      idempotency.set(key, { inputHash, refundId: null, at: Date.now(), inFlight: true });
      const { refund, userErrors } = createRefund(input);
      if (!refund) {
        // A refused request keeps no key: the same key may be sent again once the input is right.
        idempotency.delete(key);
        return { refund: null, order: null, userErrors };
      }
      idempotency.set(key, { inputHash, refundId: refund.id, at: Date.now(), inFlight: false });
      return { refund: refundView(refund), order: orderView(orders.get(refund.orderId)!), userErrors };
    },
  };

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  function answer(res: ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 16) });
    res.end(JSON.stringify(body));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin');
    const path = /^\/admin\/api\/([^/]+)\/graphql\.json$/.exec(url.pathname);
    if (!path || req.method !== 'POST') return answer(res, 404, { errors: 'Not Found' });
    if (path[1] !== apiVersion && path[1] !== 'unstable') return answer(res, 404, { errors: 'Not Found' });
    if (req.headers['x-shopify-access-token'] !== accessToken) return answer(res, 401, { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return answer(res, 415, { errors: 'Content-Type must be application/json' });
    let body: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch {
      return answer(res, 400, { errors: { query: 'Required parameter missing or invalid' } });
    }
    if (typeof body.query !== 'string') return answer(res, 400, { errors: { query: 'Required parameter missing or invalid' } });
    const variables = (body.variables && typeof body.variables === 'object' ? body.variables : {}) as Record<string, unknown>;
    let document: DocumentNode;
    try {
      document = parse(body.query);
    } catch (error) {
      const e = error as GraphQLError;
      return answer(res, 200, { errors: [{ message: e.message, locations: e.locations, extensions: { code: 'PARSE_ERROR' } }] });
    }
    const invalid = validate(STANDIN_SCHEMA, document);
    if (invalid.length > 0) {
      return answer(res, 200, { errors: invalid.map((e) => ({ ...shopifyMessage(e), locations: e.locations, path: e.path })) });
    }
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const operation = operations.length === 1 ? operations[0]! : operations.find((o) => o.name?.value === body.operationName);
    if (!operation) return answer(res, 200, { errors: [{ message: 'An operation name is required when the document has several', extensions: { code: 'BAD_REQUEST' } }] });
    const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
    const cost = requestedCost(STANDIN_SCHEMA, operation, fragments, variables);
    const kind = operation.operation === OperationTypeNode.MUTATION ? 'mutation' : 'query';
    const status = () => throttleStatus();
    if (cost > MAX_QUERY_COST) {
      seen.push({ operation: kind, name: operation.name?.value ?? null, throttled: false });
      return answer(res, 200, {
        errors: [
          {
            message: `Query cost is ${cost}, which exceeds the single query max cost limit (${MAX_QUERY_COST}).`,
            extensions: { code: 'MAX_COST_EXCEEDED', cost, maxCost: MAX_QUERY_COST },
          },
        ],
        extensions: { cost: { requestedQueryCost: cost, actualQueryCost: null, throttleStatus: status() } },
      });
    }
    refill();
    if (bucket.available < cost) {
      seen.push({ operation: kind, name: operation.name?.value ?? null, throttled: true });
      return answer(res, 200, {
        errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' } }],
        extensions: { cost: { requestedQueryCost: cost, actualQueryCost: null, throttleStatus: status() } },
      });
    }
    seen.push({ operation: kind, name: operation.name?.value ?? null, throttled: false });
    const at = faults.findIndex((f) => f.operation === kind);
    const fault = at >= 0 ? faults.splice(at, 1)[0]!.fault : undefined;
    if (fault?.kind === 'unavailable') {
      res.writeHead(503, { 'content-type': 'text/html' });
      return void res.end('<html><body>Service Unavailable</body></html>');
    }
    bucket.available -= cost;
    const result = await execute({ schema: STANDIN_SCHEMA, document, rootValue, variableValues: variables, operationName: operation.name?.value ?? null });
    // Shopify refunds the bucket what the query did not use.
    const actual = Math.min(cost, actualCost(STANDIN_SCHEMA, operation, fragments, variables, result.data));
    bucket.available = Math.min(bucket.maximumAvailable, bucket.available + (cost - actual));
    if (fault?.kind === 'lose_response') return void req.socket.destroy();
    const errors = result.errors?.map((e) => ({ message: e.message, locations: e.locations, path: e.path, extensions: e.extensions }));
    return answer(res, 200, {
      ...(result.data !== undefined ? { data: result.data } : {}),
      ...(errors?.length ? { errors } : {}),
      extensions: { cost: { requestedQueryCost: cost, actualQueryCost: actual, throttleStatus: status() } },
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) =>
      answer(res, 500, { errors: [{ message: `stand-in failure: ${(error as Error).message}`, extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    storeDomain,
    accessToken,
    apiVersion,
    webhookSecret,
    addCustomer(email) {
      const id = `gid://shopify/Customer/${nextId()}`;
      customers.set(id, { id, email });
      return id;
    },
    addOrder(input) {
      const order: StandinOrder = {
        id: `gid://shopify/Order/${nextId()}`,
        name: input.name,
        customerId: input.customerId,
        createdAt: input.createdAt,
        cancelledAt: input.cancelledAt ?? null,
        note: input.note ?? null,
        currency: input.currency,
        lines: input.lines,
        address: input.address ?? null,
        fulfillments: (input.fulfillments ?? []).map((f) => ({
          id: `gid://shopify/Fulfillment/${nextId()}`,
          createdAt: f.createdAt,
          displayStatus: f.displayStatus,
          tracking: [{ company: f.company, number: f.number }],
        })),
      };
      orders.set(order.id, order);
      const total = order.lines.reduce((sum, l) => sum + l.quantity * l.unitMinor, 0);
      for (const charge of input.charges ?? [{ amountMinor: total, createdAt: input.createdAt }]) {
        const t: StandinTransaction = {
          id: `gid://shopify/OrderTransaction/${nextId()}`,
          orderId: order.id,
          kind: charge.kind ?? 'SALE',
          status: 'SUCCESS',
          gateway: charge.gateway ?? 'shopify_payments',
          createdAt: charge.createdAt,
          errorCode: null,
          amountMinor: charge.amountMinor,
          parentId: null,
        };
        transactions.set(t.id, t);
      }
      return order;
    },
    addRefund({ parentId, amountMinor, createdAt, note }) {
      const parent = transactions.get(parentId);
      if (!parent) throw new Error(`stand-in has no transaction ${parentId}`);
      const t: StandinTransaction = {
        id: `gid://shopify/OrderTransaction/${nextId()}`,
        orderId: parent.orderId,
        kind: 'REFUND',
        status: 'SUCCESS',
        gateway: parent.gateway,
        createdAt,
        errorCode: null,
        amountMinor,
        parentId,
      };
      transactions.set(t.id, t);
      const refund: StandinRefund = { id: `gid://shopify/Refund/${nextId()}`, orderId: parent.orderId, createdAt, note: note ?? null, transactionIds: [t.id] };
      refunds.set(refund.id, refund);
      return refund;
    },
    order: (id) => orders.get(id),
    transactions: (orderId) => [...transactions.values()].filter((t) => !orderId || t.orderId === orderId),
    refunds: (orderId) => [...refunds.values()].filter((r) => !orderId || r.orderId === orderId),
    throttleStatus,
    setBucket(currentlyAvailable, restoreRate) {
      refill();
      bucket.available = currentlyAvailable;
      if (restoreRate !== undefined) bucket.restoreRate = restoreRate;
    },
    fault(fault, operation = 'mutation') {
      faults.push({ fault, operation });
    },
    requests: () => [...seen],
    failRefund(transactionId, errorCode = 'PROCESSING_ERROR') {
      const t = transactions.get(transactionId);
      if (!t || t.kind !== 'REFUND') throw new Error(`stand-in has no refund transaction ${transactionId}`);
      t.status = 'FAILURE';
      t.errorCode = errorCode;
      const refund = [...refunds.values()].find((r) => r.transactionIds.includes(t.id))!;
      const order = orders.get(t.orderId)!;
      const legacy = (gid: string) => Number(gid.split('/').pop());
      const body = JSON.stringify({
        id: legacy(refund.id),
        order_id: legacy(order.id),
        created_at: refund.createdAt,
        note: refund.note,
        restock: false,
        transactions: refund.transactionIds.map((id) => {
          const x = transactions.get(id)!;
          return {
            id: legacy(x.id),
            order_id: legacy(order.id),
            kind: 'refund',
            gateway: x.gateway,
            status: x.status.toLowerCase(),
            amount: minorToDecimal(x.amountMinor, order.currency),
            currency: order.currency,
            parent_id: x.parentId ? legacy(x.parentId) : null,
            created_at: x.createdAt,
            error_code: x.errorCode ? x.errorCode.toLowerCase() : null,
          };
        }),
        refund_line_items: [],
      });
      return { body, hmac: createHmac('sha256', webhookSecret).update(body).digest('base64') };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
