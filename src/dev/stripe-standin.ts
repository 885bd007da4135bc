import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A test double of Stripe's API for the calls casework makes, as strict as Stripe's
// documentation (docs.stripe.com/api): secret-key bearer auth, form-encoded bodies with bracketed
// metadata, charges found by `charges/search` on metadata, refunds listed by charge and created
// with an Idempotency-Key. A key replays its first answer (Idempotent-Replayed: true) for the same
// parameters and is refused with 400 `idempotency_error` for different ones. A refund larger than
// what is left on the charge is 400 `amount_too_large`; a fully refunded charge 400
// `charge_already_refunded`. Events are signed as `Stripe-Signature: t=…,v1=…` documents.
// Nothing reaches Stripe: the server listens on loopback only.

/** A charge as Stripe returns it (the fields casework reads). */
export interface StandinCharge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  currency: string;
  status: 'succeeded' | 'pending' | 'failed';
  paid: boolean;
  refunded: boolean;
  created: number;
  metadata: Record<string, string>;
  payment_intent: string | null;
  /** How it was paid, as Stripe documents the field: {type: "card", card: {brand, last4, wallet}} or {type: "paypal", paypal: {}}. */
  payment_method_details: StandinPaymentMethod | null;
}

/** A charge's payment_method_details, the parts casework reads. */
export type StandinPaymentMethod =
  { type: 'card'; card: { brand: 'visa' | 'mastercard' | 'amex'; last4: string; wallet: { type: 'apple_pay' } | null } } | { type: 'paypal'; paypal: Record<string, never> };

/** A refund as Stripe returns it. */
export interface StandinRefund {
  id: string;
  object: 'refund';
  amount: number;
  charge: string;
  currency: string;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled' | 'requires_action';
  reason: 'duplicate' | 'fraudulent' | 'requested_by_customer' | null;
  failure_reason?: string;
  created: number;
  metadata: Record<string, string>;
  payment_intent: string | null;
}

/** A fault the next matching request meets. */
export type StripeFault =
  /** 429 with Stripe's rate-limit error, as Stripe sends it (no Retry-After). */
  | { kind: 'rate_limit' }
  /** 500 api_error. */
  | { kind: 'server_error' }
  /** The request is carried out, then the connection is cut before the answer: a lost response. */
  | { kind: 'lose_response' }
  /**
   * The request is carried out and its answer held: `held` is called with a function that sends
   * it, so a test can act (kill the caller) between the refund being made and the answer arriving.
   */
  | { kind: 'hold_response'; held: (release: () => void) => void };

/** The running stand-in. */
export interface StripeStandin {
  url: string;
  /** The secret key requests must carry. */
  secretKey: string;
  /** The webhook endpoint's signing secret (whsec_…). */
  webhookSecret: string;
  /** Adds a captured charge for an order (metadata.order_id). */
  /** A captured charge of an order (`created`: unix seconds, now by default). */
  addCharge(input: { orderId: string; amount: number; currency: string; id?: string; created?: number; paymentMethod?: StandinPaymentMethod }): StandinCharge;
  /** A refund made before casework (a shop's history): settled or pending on a charge. */
  addRefund(input: { id: string; chargeId: string; amount: number; status: 'succeeded' | 'pending'; created?: number }): StandinRefund;
  charge(id: string): StandinCharge | undefined;
  refunds(): StandinRefund[];
  /** Queues faults for the next POST /v1/refunds (or any request, with `path`). */
  fault(fault: StripeFault, path?: string): void;
  /** Requests seen, by method and path. */
  requests(): { method: string; path: string; idempotencyKey?: string }[];
  /** Marks a refund failed later, as a bank can, and returns the signed `refund.failed` event for it. */
  failRefund(refundId: string, reason?: string): { body: string; signature: string };
  /** Signs a payload as Stripe signs webhook events. */
  sign(payload: string, timestamp?: number): string;
  close(): Promise<void>;
}

function stripeError(res: ServerResponse, status: number, error: Record<string, unknown>, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}`, ...headers });
  res.end(JSON.stringify({ error }));
}

function ok(res: ServerResponse, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}`, ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Stripe's form encoding: `metadata[order_id]=5230` becomes { metadata: { order_id: '5230' } }. */
function parseForm(text: string): Record<string, string | Record<string, string>> {
  const out: Record<string, string | Record<string, string>> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const nested = /^(\w+)\[(\w+)\]$/.exec(key);
    if (nested) {
      const bag = (out[nested[1]!] ?? {}) as Record<string, string>;
      bag[nested[2]!] = value;
      out[nested[1]!] = bag;
    } else out[key] = value;
  }
  return out;
}

const REFUND_REASONS = new Set(['duplicate', 'fraudulent', 'requested_by_customer']);
const KNOWN_REFUND_PARAMS = new Set(['charge', 'payment_intent', 'amount', 'reason', 'metadata', 'currency', 'instructions_email', 'origin', 'expand']);

/** Starts the stand-in on a free loopback port. */
export async function startStripeStandin(): Promise<StripeStandin> {
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const charges = new Map<string, StandinCharge>();
  const refunds = new Map<string, StandinRefund>();
  const idempotency = new Map<string, { paramsHash: string; status: number; body: unknown }>();
  const faults: { fault: StripeFault; path: string }[] = [];
  const seen: { method: string; path: string; idempotencyKey?: string }[] = [];
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (payload: string, timestamp = now()) => `t=${timestamp},v1=${createHmac('sha256', webhookSecret).update(`${timestamp}.${payload}`).digest('hex')}`;

  async function createRefund(params: Record<string, string | Record<string, string>>): Promise<{ status: number; body: unknown }> {
    for (const key of Object.keys(params)) {
      if (!KNOWN_REFUND_PARAMS.has(key))
        return { status: 400, body: { error: { type: 'invalid_request_error', code: 'parameter_unknown', param: key, message: `Received unknown parameter: ${key}` } } };
    }
    const chargeId = typeof params.charge === 'string' ? params.charge : undefined;
    const charge = chargeId ? charges.get(chargeId) : undefined;
    if (!charge)
      return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'charge', message: `No such charge: '${chargeId ?? ''}'` } } };
    const reason = typeof params.reason === 'string' ? params.reason : undefined;
    if (reason !== undefined && !REFUND_REASONS.has(reason)) {
      return {
        status: 400,
        body: {
          error: {
            type: 'invalid_request_error',
            code: 'parameter_invalid_string',
            param: 'reason',
            message: `Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer`,
          },
        },
      };
    }
    const left = charge.amount_captured - charge.amount_refunded;
    const amount = typeof params.amount === 'string' ? Number(params.amount) : left;
    if (!Number.isInteger(amount) || amount < 1)
      return { status: 400, body: { error: { type: 'invalid_request_error', code: 'parameter_invalid_integer', param: 'amount', message: 'Invalid positive integer' } } };
    if (left === 0)
      return { status: 400, body: { error: { type: 'invalid_request_error', code: 'charge_already_refunded', message: `Charge ${charge.id} has already been refunded.` } } };
    if (amount > left) {
      return {
        status: 400,
        body: {
          error: {
            type: 'invalid_request_error',
            code: 'amount_too_large',
            param: 'amount',
            message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
          },
        },
      };
    }
    const refund: StandinRefund = {
      id: `re_${randomBytes(12).toString('hex')}`,
      object: 'refund',
      amount,
      charge: charge.id,
      currency: charge.currency,
      status: 'succeeded',
      reason: (reason as StandinRefund['reason']) ?? null,
      created: now(),
      metadata: (params.metadata as Record<string, string> | undefined) ?? {},
      payment_intent: charge.payment_intent,
    };
    refunds.set(refund.id, refund);
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount_captured;
    return { status: 200, body: refund };
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://standin');
      const key = req.headers['idempotency-key'] as string | undefined;
      seen.push({ method: req.method ?? '', path: url.pathname, ...(key ? { idempotencyKey: key } : {}) });
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        return stripeError(res, 401, { type: 'invalid_request_error', message: 'Invalid API Key provided' });
      }
      // A lost response is a write's (the refund made, its answer lost): reads on the same path pass it by.
      const at = faults.findIndex((f) => f.path === url.pathname && ((f.fault.kind !== 'lose_response' && f.fault.kind !== 'hold_response') || req.method === 'POST'));
      const fault = at >= 0 ? faults.splice(at, 1)[0]!.fault : undefined;
      if (fault?.kind === 'rate_limit') return stripeError(res, 429, { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' });
      if (fault?.kind === 'server_error') return stripeError(res, 500, { type: 'api_error', message: 'An unknown error occurred' });

      if (req.method === 'GET' && url.pathname === '/v1/charges/search') {
        const match = /^metadata\['order_id'\]:'([^']*)'$/.exec(url.searchParams.get('query') ?? '');
        if (!match) return stripeError(res, 400, { type: 'invalid_request_error', param: 'query', message: 'Invalid search query' });
        const data = [...charges.values()].filter((c) => c.metadata.order_id === match[1]);
        return ok(res, { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/charges/search' });
      }
      if (req.method === 'GET' && url.pathname === '/v1/refunds') {
        const charge = url.searchParams.get('charge');
        const data = [...refunds.values()].filter((r) => !charge || r.charge === charge).sort((a, b) => b.created - a.created);
        return ok(res, { object: 'list', data, has_more: false, url: '/v1/refunds' });
      }
      const one = /^\/v1\/refunds\/(re_\w+)$/.exec(url.pathname);
      if (req.method === 'GET' && one) {
        const refund = refunds.get(one[1]!);
        return refund ? ok(res, refund) : stripeError(res, 404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such refund: '${one[1]}'` });
      }
      if (req.method === 'POST' && url.pathname === '/v1/refunds') {
        if (req.headers['content-type']?.split(';')[0] !== 'application/x-www-form-urlencoded') {
          return stripeError(res, 400, { type: 'invalid_request_error', message: 'Stripe takes form-encoded request bodies' });
        }
        const text = await readBody(req);
        const paramsHash = createHash('sha256').update(text).digest('hex');
        if (key) {
          const earlier = idempotency.get(key);
          if (earlier && earlier.paramsHash !== paramsHash) {
            return stripeError(res, 400, {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            });
          }
          if (earlier) {
            res.writeHead(earlier.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true', 'idempotency-key': key });
            return res.end(JSON.stringify(earlier.body));
          }
        }
        const answer = await createRefund(parseForm(text));
        // Stripe keeps the answer to a key, errors from validation included, for 24 hours.
        if (key) idempotency.set(key, { paramsHash, ...answer });
        if (fault?.kind === 'lose_response') return req.socket.destroy();
        const respond = () => {
          if (res.destroyed || res.writableEnded) return;
          res.writeHead(answer.status, { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) });
          res.end(JSON.stringify(answer.body));
        };
        if (fault?.kind === 'hold_response') return fault.held(respond);
        return respond();
      }
      return stripeError(res, 404, { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${url.pathname}).` });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    secretKey,
    webhookSecret,
    addCharge({ orderId, amount, currency, id, created, paymentMethod }) {
      const charge: StandinCharge = {
        id: id ?? `ch_${randomBytes(12).toString('hex')}`,
        object: 'charge',
        amount,
        amount_captured: amount,
        amount_refunded: 0,
        captured: true,
        currency: currency.toLowerCase(),
        status: 'succeeded',
        paid: true,
        refunded: false,
        created: created ?? now(),
        metadata: { order_id: orderId },
        payment_intent: `pi_${randomBytes(12).toString('hex')}`,
        payment_method_details: paymentMethod ?? null,
      };
      charges.set(charge.id, charge);
      return charge;
    },
    addRefund({ id, chargeId, amount, status, created }) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`stand-in has no charge ${chargeId}`);
      const refund: StandinRefund = {
        id,
        object: 'refund',
        amount,
        charge: chargeId,
        currency: charge.currency,
        status,
        reason: null,
        created: created ?? now(),
        metadata: {},
        payment_intent: charge.payment_intent,
      };
      refunds.set(id, refund);
      charge.amount_refunded += amount;
      charge.refunded = charge.amount_refunded === charge.amount_captured;
      return refund;
    },
    charge: (id) => charges.get(id),
    refunds: () => [...refunds.values()],
    fault(fault, path = '/v1/refunds') {
      faults.push({ fault, path });
    },
    requests: () => [...seen],
    failRefund(refundId, reason = 'lost_or_stolen_card') {
      const refund = refunds.get(refundId);
      if (!refund) throw new Error(`stand-in has no refund ${refundId}`);
      refund.status = 'failed';
      refund.failure_reason = reason;
      const charge = charges.get(refund.charge)!;
      charge.amount_refunded -= refund.amount;
      charge.refunded = false;
      const body = JSON.stringify({
        id: `evt_${randomBytes(12).toString('hex')}`,
        object: 'event',
        type: 'refund.failed',
        created: now(),
        data: { object: refund },
        livemode: false,
        api_version: '2026-11-18.endive',
      });
      return { body, signature: sign(body) };
    },
    sign,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
