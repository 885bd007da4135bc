import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsCardNumber, findSensitive, luhnValid, redactSensitive } from '../src/memory/sensitive';

const refused = (text: string) => findSensitive(text)?.category;

describe('what memory never stores', () => {
  it('checks card numbers with Luhn', () => {
    assert.equal(luhnValid('4111111111111111'), true);
    assert.equal(luhnValid('4111111111111112'), false);
  });

  it('refuses a card number however it is spaced or dashed', () => {
    for (const text of [
      'my card is 4111 1111 1111 1111',
      'card 4111-1111-1111-1111 please',
      'use 4111111111111111',
      'amex 3782 822463 10005',
      'card 4111 1111 1111 1111 exp 12 25',
    ]) {
      assert.equal(refused(text), 'card_number', text);
    }
  });

  it('does not mistake order numbers, phone numbers or a failed checksum for a card', () => {
    assert.equal(containsCardNumber('order 4471 and order 5102'), false);
    assert.equal(containsCardNumber('call me on 07700 900123'), false);
    assert.equal(containsCardNumber('4111 1111 1111 1112'), false);
    assert.equal(findSensitive('Deliveries must go to Block B, not the main gate'), null);
    assert.equal(findSensitive('Prefers replacements to refunds'), null);
    assert.equal(findSensitive('Parcel for order 4471 was left at the wrong building on 14 Oct'), null);
  });

  it('refuses card security codes', () => {
    assert.equal(refused('cvv 123'), 'card_security_code');
    assert.equal(refused('the security code is 987'), 'card_security_code');
    assert.equal(refused('CVC2: 4321'), 'card_security_code');
  });

  it('refuses passwords and one-time codes', () => {
    assert.equal(refused('her password is hunter2'), 'password');
    assert.equal(refused('Passcode: tulip'), 'password');
    assert.equal(refused('the one-time code was 482913'), 'one_time_code');
    assert.equal(refused('OTP 1234'), 'one_time_code');
    assert.equal(refused('my verification code is 55 12 90'), 'one_time_code');
    assert.equal(refused('the code is 482913'), 'one_time_code');
  });

  it('lets postcodes and order numbers near the word "code" through', () => {
    assert.equal(findSensitive('postcode 12345 is correct'), null);
    assert.equal(findSensitive('the discount code for order 4471 did not apply'), null);
  });

  it('refuses PINs and door or gate codes', () => {
    assert.equal(refused('PIN 4821'), 'access_code');
    assert.equal(refused('gate code is 1234, leave inside'), 'access_code');
  });

  it('refuses bank details and identity numbers', () => {
    assert.equal(refused('refund to GB82 WEST 1234 5698 7654 32'), 'bank_account');
    assert.equal(refused('sort code 12-34-56'), 'bank_account');
    assert.equal(refused('SSN 123-45-6789'), 'government_id');
  });

  it('refuses sensitive asides about health, religion and other personal matters', () => {
    assert.equal(refused('she is pregnant so cannot carry heavy boxes'), 'sensitive_aside');
    assert.equal(refused('was in hospital last week'), 'sensitive_aside');
    assert.equal(refused('on medication for anxiety'), 'sensitive_aside');
    assert.equal(refused('observes Ramadan, no deliveries at sunset'), 'sensitive_aside');
    assert.equal(refused('going through a divorce'), 'sensitive_aside');
  });

  it('gives a short reason the model can act on', () => {
    const finding = findSensitive('my card is 4111 1111 1111 1111');
    assert.match(finding?.reason ?? '', /card number/);
    assert.ok((finding?.reason.length ?? 0) < 200);
  });

  it('redacts whole sentences that hold something memory never keeps, and keeps the rest', () => {
    const text = 'Parcel left at the wrong building. Customer read out card 4111 1111 1111 1111. Refunded.';
    assert.equal(redactSensitive(text), 'Parcel left at the wrong building. [removed: card number] Refunded.');
  });
});
