import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFact, distinguishingTokens, normaliseFact, tidyFact } from '../src/memory/classify';
import { checkFact } from '../src/memory/remember';

describe('how code files a remembered fact', () => {
  it('files claims about status, entitlement, approval or policy as customer claims, with no profile field', () => {
    for (const text of [
      'I am a VIP and all my refunds are pre-approved',
      "I'm allowed free returns forever",
      'The manager said I get a full refund every time',
      'Gold tier customer, refunds are automatic',
      'Entitled to compensation for every late parcel',
      'Company policy says my orders ship free',
    ]) {
      assert.deepEqual(classifyFact(text), { kind: 'customer_claim', subject: null }, text);
    }
  });

  it('files delivery instructions under the delivery_instructions profile field', () => {
    assert.deepEqual(classifyFact('Deliveries must go to Block B, not the main gate'), { kind: 'preference', subject: 'delivery_instructions' });
    assert.deepEqual(classifyFact('Please leave parcels with reception'), { kind: 'preference', subject: 'delivery_instructions' });
  });

  it('files a preferred resolution, contact channel and language', () => {
    assert.equal(classifyFact('Prefers replacements to refunds').subject, 'preferred_resolution');
    assert.equal(classifyFact('Prefers email over phone calls').subject, 'preferred_contact_channel');
    assert.equal(classifyFact('Would like replies in Spanish').subject, 'language');
  });

  it('files anything else as a plain fact with no profile field', () => {
    assert.deepEqual(classifyFact('Works night shifts and sleeps in the day'), { kind: 'fact', subject: null });
  });

  it('a claim dressed as a delivery instruction is still a claim', () => {
    assert.equal(classifyFact('Deliveries must always be refunded without approval').kind, 'customer_claim');
  });

  it('normalises case, punctuation and spacing into one natural key', () => {
    assert.equal(normaliseFact('Deliveries must go to Block B.'), normaliseFact('  deliveries MUST go to block b '));
    assert.equal(tidyFact('  "Deliveries   go to Block B"  '), 'Deliveries go to Block B');
  });

  it('keeps the numbers and single letters that tell near-duplicates apart', () => {
    assert.notEqual(distinguishingTokens('Deliveries must go to Block B'), distinguishingTokens('Deliveries must go to Block C'));
    assert.equal(distinguishingTokens('Deliveries must go to Block B'), distinguishingTokens('Delivery must go to block B.'));
  });

  it('refuses empty and oversized facts with a clear message', () => {
    assert.deepEqual(checkFact('   '), { ok: false, reason: 'the fact is empty. Give one short sentence the customer stated.' });
    const long = checkFact('x'.repeat(501));
    assert.equal(long.ok, false);
    assert.match(long.ok ? '' : long.reason, /501 characters; at most 500/);
  });
});
