// The words customers and agents use for the same thing in support about orders and
// deliveries: British and American spellings and names (flat / apartment, lift / elevator)
// and the everyday synonyms of the trade (parcel / package, courier / driver). A question in
// other words than the note shares no term with it, and a small sentence model such as
// MiniLM puts "apartment" and "flat" further apart than a person would; the question is
// widened with the other words of each group it uses, for the full-text search and for the
// local model's query embedding. Pure. Groups are general vocabulary, not answers: a group
// names one thing, each of its words alone could stand for it.

/** Groups of words and phrases that name the same thing. */
export const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['flat', 'apartment'],
  ['parcel', 'package', 'packet'],
  ['courier', 'driver', 'delivery person', 'postman'],
  ['lift', 'elevator'],
  ['floor', 'storey'],
  ['holiday', 'vacation', 'away', 'trip'],
  ['intercom', 'entry phone', 'entryphone', 'door entry'],
  ['doorbell', 'bell', 'buzzer'],
  ['safe place', 'fallback spot', 'hiding place', 'hidden'],
  ['phone', 'call', 'ring', 'telephone'],
  ['text', 'sms'],
  ['email', 'e-mail'],
  ['refund', 'money back'],
  ['replacement', 'exchange'],
  ['damaged', 'broken', 'faulty', 'defective'],
  ['catalogue', 'catalog', 'brochure', 'leaflet'],
  ['brand', 'manufacturer'],
  ['invoice', 'bill', 'receipt'],
  ['neighbour', 'neighbor', 'next door'],
  ['concierge', 'reception', 'lobby', 'front desk', 'porter'],
  ['bin', 'rubbish', 'trash', 'garbage'],
  ['shop', 'store'],
  ['gift', 'present'],
  ['surname', 'last name', 'family name'],
  ['postcode', 'zip code'],
  ['mobile', 'cell phone'],
];

// One pattern per term: the whole word or phrase, with an optional plural ending.
const TERMS = SYNONYM_GROUPS.map((group) => group.map((term) => ({ term, pattern: new RegExp(`(?:^|[^\\p{L}\\p{N}])${term}(?:s|es)?(?![\\p{L}\\p{N}])`, 'iu') })));

/**
 * The other words of every group `text` uses, in group order, without the ones it already
 * uses: "drop off packages at my apartment" gives parcel, packet, flat.
 */
export function synonymsFor(text: string): string[] {
  const found: string[] = [];
  for (const group of TERMS) {
    if (!group.some(({ pattern }) => pattern.test(text))) continue;
    for (const { term, pattern } of group) if (!pattern.test(text) && !found.includes(term)) found.push(term);
  }
  return found;
}

/** `text` followed by the synonyms of the words it uses: what a query is searched as. */
export function widenQuery(text: string): string {
  const extra = synonymsFor(text);
  return extra.length ? `${text} ${extra.join(' ')}` : text;
}
