import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadScreenCorpus } from '../src/dev/screen-corpus';
import { findSensitive, redactSensitive } from '../src/memory/sensitive';

const corpus = loadScreenCorpus();

// What each refusal reason must name, so the model knows what to leave out when it retries.
const NAMES_ITS_KIND: Record<string, RegExp> = {
  card_number: /card number/,
  card_security_code: /security code/,
  bank_account: /bank account/,
  password: /password/,
  one_time_code: /one-time or verification code/,
  access_code: /PIN or an access code/,
  government_id: /identity number/,
  sensitive_aside: /mentions (?:health|religion|sexuality|ethnic|political|trade union|a criminal|a sensitive)/,
  third_party: /another person's personal details/,
};

describe('the privacy screen against its labelled corpus', () => {
  it('has at least 60 sentences, half to refuse and half to keep, in each set', () => {
    assert.ok(corpus.length >= 60, `${corpus.length} sentences`);
    for (const set of ['dev', 'holdout', 'holdout2'] as const) {
      const slice = corpus.filter((s) => s.set === set);
      assert.equal(slice.filter((s) => s.label === 'refuse').length * 2, slice.length, set);
    }
    assert.equal(new Set(corpus.map((s) => s.text)).size, corpus.length, 'no sentence twice');
  });

  for (const sentence of corpus) {
    if (sentence.label === 'refuse') {
      it(`refuses as ${sentence.category}: ${sentence.text}`, () => {
        const finding = findSensitive(sentence.text);
        assert.equal(finding?.category, sentence.category);
        assert.match(finding.reason, NAMES_ITS_KIND[sentence.category]!);
        assert.ok(!finding.reason.toLowerCase().includes(sentence.detail.toLowerCase()), 'the reason never repeats what it refused');
        const redacted = redactSensitive(`Order checked. ${sentence.text}. Closed.`);
        assert.ok(!redacted.includes(sentence.detail), redacted);
        assert.match(redacted, /^Order checked\. \[removed: [a-z' ]+\] Closed\.$/);
      });
    } else {
      it(`keeps: ${sentence.text}`, () => {
        assert.equal(findSensitive(sentence.text), null);
        assert.equal(redactSensitive(sentence.text), sentence.text);
      });
    }
  }
});

describe('where the screen draws its lines', () => {
  it('refuses the password from the issue and keeps sentences about passwords and codes that hold none', () => {
    assert.equal(findSensitive('Login priya.k@example.com, pw hunter2')?.category, 'password');
    assert.equal(findSensitive('The gate code changes every month, so ask me for the current one'), null);
    assert.equal(findSensitive('I reset my password last week'), null);
    assert.equal(findSensitive('The gate code is 1234')?.category, 'access_code');
  });

  it("keeps a neighbour who takes parcels, and refuses that neighbour's name, address or phone", () => {
    assert.equal(findSensitive('My neighbour at number 12 is happy to take in parcels'), null);
    assert.equal(findSensitive('My neighbour Dana Whitfield at 12 Orchard Lane is happy to take in parcels')?.category, 'third_party');
    assert.equal(findSensitive('My neighbour at number 12 is happy to take in parcels, her mobile is 07700 900456')?.category, 'third_party');
  });

  it("keeps the customer's own order written in the third person, and refuses another person's", () => {
    assert.equal(findSensitive('Her order 5102 was lost in transit'), null);
    assert.equal(findSensitive('Dana Whitfield at 14 Orchard Lane… her order 5102 was lost')?.category, 'third_party');
  });

  it('keeps every reason short enough to read at a glance', () => {
    for (const sentence of corpus) {
      const finding = findSensitive(sentence.text);
      if (finding) assert.ok(finding.reason.length <= 200, finding.reason);
    }
  });
});

describe('redacting case text memory keeps', () => {
  it('removes the sentence with the login and keeps the rest of the summary', () => {
    assert.equal(
      redactSensitive('Checked tracking. Customer gave login priya.k@example.com, pw hunter2 to check the portal. Refunded order 4471.'),
      'Checked tracking. [removed: password] Refunded order 4471.',
    );
  });

  it('does not split a sentence after "Mr." or "no." and so miss what it holds', () => {
    assert.equal(redactSensitive('Mr. Okafor at number 9 has a new phone, 07700 900789. Parcel found.'), "[removed: another person's details] Parcel found.");
    assert.equal(redactSensitive('Account no. 31926819, sort code 12-34-56. Refund sent.'), '[removed: bank account] Refund sent.');
  });

  it('removes both halves of a secret split over two sentences', () => {
    assert.equal(redactSensitive('Her password is below. Tulip99'), '[removed: password] [removed: password]');
  });

  it('keeps neighbouring sentences that only look like one person together', () => {
    assert.equal(redactSensitive('Her husband can sign. Call her on 07700 900123.'), 'Her husband can sign. Call her on 07700 900123.');
  });
});
