import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inCustomerVoice } from '../src/memory/voice';

// The agent asks about the customer in the third person; notes are in the customer's voice.
// The query the local model embeds is put in that voice.

describe("a question put in the customer's voice", () => {
  it('asks about "her", "him", "them" and "the customer" as "I", "my" and "me"', () => {
    assert.equal(inCustomerVoice('does she have animals at home?'), 'do I have animals at home?');
    assert.equal(inCustomerVoice('what is her home address?'), 'what is my home address?');
    assert.equal(inCustomerVoice('how would they like us to get in touch with them?'), 'how would I like us to get in touch with me?');
    assert.equal(inCustomerVoice('Is the customer away in August?'), 'am I away in August?');
    assert.equal(inCustomerVoice('when is it too early to ring this person?'), 'when is it too early to ring me?');
  });

  it('leaves a question that is not about the customer as it is, words that merely contain a pronoun included', () => {
    assert.equal(inCustomerVoice('order 4471 left at the wrong building'), 'order 4471 left at the wrong building');
    assert.equal(inCustomerVoice('the theme shop sent the shepherd pie late'), 'the theme shop sent the shepherd pie late');
  });
});
