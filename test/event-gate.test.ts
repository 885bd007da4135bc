import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InvalidEventError, parseTicketEvent, type TicketEvent } from '../src/schemas/event';
import { isInvisible } from '../src/schemas/text';

// The gate refuses, naming the field, every event whose bytes Postgres could not store or whose
// ids or message are blank; it never lets one through to fail the run ten attempts later.

const good = { eventId: 'e-1', type: 'ticket.created', ticketId: 'T-1', customerId: 'cust_dana', message: 'Where is order 5102?', receivedAt: '2026-11-30T09:00:00Z' };

function refusal(value: unknown): InvalidEventError {
  try {
    parseTicketEvent(value);
  } catch (error) {
    assert.ok(error instanceof InvalidEventError, `expected InvalidEventError, got ${(error as Error).name}: ${(error as Error).message}`);
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(value)}`);
}

test('refuses a NUL byte in the message or in the customer id, naming the field', () => {
  assert.match(refusal({ ...good, message: 'my parcel\u0000 never came' }).message, /message: contains a NUL byte/);
  assert.match(refusal({ ...good, customerId: 'cust\u0000dana' }).message, /customerId: contains a NUL byte/);
  assert.match(refusal({ ...good, eventId: 'e\u00001' }).message, /eventId: contains a NUL byte/);
});

test('refuses other control characters but keeps tabs and line breaks in a message', () => {
  assert.match(refusal({ ...good, message: 'bell \u0007 here' }).message, /message: contains a control character/);
  assert.match(refusal({ ...good, customerId: 'cust\ndana' }).message, /customerId: contains a control character/);
  assert.equal(parseTicketEvent({ ...good, message: 'line one\r\nline two\tcolumn' }).message, 'line one\r\nline two\tcolumn');
});

test('refuses blank or whitespace-only ids, naming each', () => {
  assert.match(refusal({ ...good, customerId: '   ' }).message, /customerId: must not be blank/);
  assert.match(refusal({ ...good, eventId: '\t \u3000' }).message, /eventId: must not be blank/);
  assert.match(refusal({ ...good, ticketId: '   ' }).message, /ticketId:/);
});

test('refuses a message made only of invisible characters', () => {
  for (const message of ['\u200b\u200b', '\ufeff', ' \u2060 \u200d', '\u3164', '\u00a0\u2003']) {
    assert.match(refusal({ ...good, message }).message, /message: (must not be empty|holds only invisible characters)/, JSON.stringify(message));
  }
  // A close carries no words, so an empty message stays fine there.
  assert.equal(parseTicketEvent({ ...good, type: 'ticket.closed', message: '' }).message, '');
});

test('refuses a lone UTF-16 surrogate, which would be altered on its way to Postgres', () => {
  assert.match(refusal({ ...good, message: 'broken \ud800 text' }).message, /message: contains a lone UTF-16 surrogate/);
});

/** True when Postgres stores the string as sent (UTF-8 round trip, no NUL). */
function storable(value: string): boolean {
  return !value.includes('\u0000') && Buffer.from(value, 'utf8').toString('utf8') === value;
}

const FIELDS = ['eventId', 'type', 'ticketId', 'customerId', 'message', 'receivedAt'] as const;

/** Strings of every kind: full Unicode (lone surrogates included), controls, invisible and blank ones. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('\u0000', '\u0007', '\u001b', '\t', '\n', '\r', ' ', '\u00a0', '\u200b', '\ufeff', '\u2060', '\ud800', '\udc00', 'a', 'Z', '-', '_', '7'),
    maxLength: 20,
  }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('', ' ', 'ticket.created', 'ticket.message', 'ticket.closed', '2026-11-30T09:00:00Z'),
);

/** Events with each field either good, a random string, or a value of the wrong type. */
const anyEvent = fc.record(
  Object.fromEntries(FIELDS.map((field) => [field, fc.oneof(fc.constant((good as Record<string, unknown>)[field]), anyText, fc.constantFrom(null, 42, [], {}, true))])) as Record<
    (typeof FIELDS)[number],
    fc.Arbitrary<unknown>
  >,
  { requiredKeys: [] },
);

test('any event either parses to storable fields or is refused as InvalidEventError naming a field', () => {
  fc.assert(
    fc.property(anyEvent, (raw) => {
      let event: TicketEvent;
      try {
        event = parseTicketEvent(raw);
      } catch (error) {
        assert.ok(error instanceof InvalidEventError, `threw ${(error as Error)?.name}: ${(error as Error)?.message}`);
        assert.ok(error.issues.length > 0);
        for (const issue of error.issues) assert.match(issue, /^(eventId|type|ticketId|customerId|message|receivedAt|\(event\)): /);
        return;
      }
      for (const field of FIELDS) assert.ok(storable(event[field]), `${field} accepted but not storable: ${JSON.stringify(event[field])}`);
      for (const id of [event.eventId, event.ticketId, event.customerId]) assert.ok(id.trim().length > 0, 'a blank id was accepted');
      if (event.type !== 'ticket.closed') assert.ok(!isInvisible(event.message), 'an invisible-only message was accepted');
    }),
    { numRuns: 3000 },
  );
});

test('a message with visible words around any storable noise is accepted word for word', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 50 }), (noise) => {
      // eslint-disable-next-line no-control-regex -- the property is about control characters
      fc.pre(storable(noise) && !/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(noise));
      const message = `refund ${noise} please`;
      assert.equal(parseTicketEvent({ ...good, message }).message, message);
    }),
    { numRuns: 1000 },
  );
});

/** Characters a person reading an id cannot see, or that reorder what they see. */
const UNSEEN = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u202e',
  '\u202a',
  '\u2066',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
  '\u00a0',
  '\u2007',
  '\u3000',
  '\u034f',
  '\ufe0f',
  '\u3164',
  '\u2800',
  '\u{e0041}',
];

test('an id made only of invisible or bidi characters is refused, naming the field', () => {
  for (const id of ['\u200b', '\u202e', '\u2060\u200d']) {
    for (const field of ['eventId', 'customerId'] as const) {
      const issues = refusal({ ...good, [field]: id }).issues;
      assert.ok(
        issues.some((i) => i.startsWith(`${field}: `)),
        `${field} ${JSON.stringify(id)}: ${issues.join('; ')}`,
      );
    }
  }
});

test('ids that differ from a readable id only by unseen characters are refused; the readable id is accepted', () => {
  const readable = fc.stringMatching(/^[A-Za-z0-9_.:@-]{1,40}$/);
  fc.assert(
    fc.property(
      readable,
      fc.array(fc.tuple(fc.constantFrom(...UNSEEN), fc.nat()), { minLength: 1, maxLength: 4 }),
      fc.constantFrom('eventId', 'customerId'),
      (base, inserts, field) => {
        // Inserted between code points, so a tag character's surrogate pair stays whole.
        const points = Array.from(base);
        for (const [ch, at] of inserts) points.splice(at % (points.length + 1), 0, ch);
        const id = points.join('');
        assert.equal(parseTicketEvent({ ...good, [field]: base })[field], base);
        const issues = refusal({ ...good, [field]: id }).issues;
        assert.ok(
          issues.some((issue) => issue.startsWith(`${field}: `) && /invisible|space|control/.test(issue)),
          `${field} ${JSON.stringify(id)} refused for: ${issues.join('; ')}`,
        );
      },
    ),
    { numRuns: 2000 },
  );
});

test('an id with a leading or trailing space is refused: it would differ only by it from the trimmed one', () => {
  assert.match(refusal({ ...good, customerId: 'cust_dana ' }).issues.join(';'), /^customerId: starts or ends with a space/);
});
