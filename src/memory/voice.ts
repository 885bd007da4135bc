// Notes are in the customer's own voice ("I work nights, so please do not call me before
// noon"); the agent asks about the customer in the third person ("when is it too early to ring
// her?"). A small symmetric sentence model such as MiniLM counts the pronouns as part of the
// meaning, so a question about "her" lands nearer other questions than the note that answers
// it. The query is put in the customer's voice before the local model embeds it. Pure. The
// rewrite is crude on purpose (a "they" that means the courier becomes "I" too): it only feeds
// the query's embedding, never what anyone reads, and it was kept because it measured better.

const AUXILIARY: Readonly<Record<string, string>> = {
  is: 'am',
  was: 'was',
  does: 'do',
  did: 'did',
  has: 'have',
  can: 'can',
  could: 'could',
  would: 'would',
  should: 'should',
  may: 'may',
  will: 'will',
};
const WHO = String.raw`she|he|they|the customer|this customer|this person`;
const ASKED = new RegExp(String.raw`\b(${Object.keys(AUXILIARY).join('|')}|are|have|do) (${WHO})\b`, 'gi');
// "ring this person", "send the customer": the object, "me".
const OBJECT = /\b(to|for|with|about|from|ring|call|phone|contact|email|text|tell|ask|send|give|reach|visit) (the customer|this customer|this person)\b/gi;
const SUBJECT = new RegExp(String.raw`\b(${WHO})\b`, 'gi');

/** `text` with the customer as "I": "does she have animals at home?" gives "do I have animals at home?". */
export function inCustomerVoice(text: string): string {
  return text
    .replace(ASKED, (_all, verb: string) => `${AUXILIARY[verb.toLowerCase()] ?? (verb.toLowerCase() === 'are' ? 'am' : verb.toLowerCase())} I`)
    .replace(OBJECT, (_all, word: string) => `${word} me`)
    .replace(SUBJECT, 'I')
    .replace(/\b(her|his|their)\b/gi, 'my')
    .replace(/\b(hers|theirs)\b/gi, 'mine')
    .replace(/\b(them|him|themselves|herself|himself)\b/gi, (word: string) => (word.toLowerCase().endsWith('self') || word.toLowerCase() === 'themselves' ? 'myself' : 'me'));
}
