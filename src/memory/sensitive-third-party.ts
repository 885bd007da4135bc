// Another person's personal details do not belong in this customer's memory. Where the line
// is: a sentence is the customer's own when it says how *their* deliveries and contacts
// work, and it may name who helps by role, first name or title and place relative to the
// customer ("my neighbour at number 12 takes parcels", "ask for Sam on the front desk",
// "Mrs Okafor at number 9 takes parcels", "send replacements to my mum's house at 5 Hill
// Street"). It is about someone else, and refused, when it carries that person's identifying
// details or facts of their own life: a full name with their address, phone, email or date of
// birth; a relative's or friend's phone, email or date of birth; where they live; their order,
// account, card or number ("my friend Jess's order 6120", "Dana Whitfield at 14 Orchard
// Lane… her order 5102 was lost"). The customer's own orders written in the third person
// ("her order 5102 was lost") are the customer's.

const RELATION =
  /\b(?:my|her|his|their|our|the customer['’]s)\s+(?:(?:ex|step|late|elderly|new|older|younger|best|old|little|big)[- ]?)?(?:sons?|daughters?|wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|mum|mom|mother|dad|father|parents?|sisters?|brothers?|siblings?|aunt|uncle|cousins?|nephews?|nieces?|grand(?:son|daughter|mother|father|ma|pa|parents?|children|child|kids?)|friends?|neighbou?rs?|colleagues?|flatmates?|housemates?|roommates?|landlord|landlady|tenants?|lodgers?|boss|child|children|kids?|in-laws?|(?:mother|father|sister|brother|son|daughter)-in-law)\b/gi;

// Capitalised words that start a pair but are not a person's first name.
const NOT_A_FIRST_NAME = new Set(
  'The A An My Her His Their Our Your If When Please Leave Deliver Deliveries Delivery Call Text Email Order Block Flat Royal Post Amazon St Saint North South East West New Old Upper Lower Great Little Main High Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April June July August September October November December Mr Mrs Ms Miss Mx Dr Prof Customer Courier Support Evri Hermes Yodel Parcelforce Parcel Mail Lidl Tesco Sainsbury Marks Temple Church'.split(
    ' ',
  ),
);
const NOT_A_SURNAME =
  /^(?:Road|Rd|Street|St|Lane|Ln|Avenue|Ave|Close|Court|Crescent|Drive|Way|Place|Square|Gardens|Grove|Hill|Row|Terrace|Walk|Mews|Park|Green|Rise|View|Hall|House|Tower|Building|Centre|Center|Estate|Market|Shop|Store|Station|Hospital|School|Library|Office|Mail|Locker|Hub|Depot|Pharmacy|Surgery|Church|Bank|Express|Prime|Kingdom|Street's)$/;
const TITLED = /\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.? [A-Z][a-z'’-]+/;

/** True when `text` names a person by full name or by title and surname. */
function namesSomeone(text: string): boolean {
  if (TITLED.test(text)) return true;
  // Overlapping pairs, so "Call Dana Whitfield" still finds "Dana Whitfield" after "Call Dana".
  for (const match of text.matchAll(/\b([A-Z][a-z'’-]+)(?= ([A-Z][a-z'’-]+)\b)/g)) {
    if (!NOT_A_FIRST_NAME.has(match[1]!) && !NOT_A_SURNAME.test(match[2]!)) return true;
  }
  return false;
}

const STREET_ADDRESS =
  /\b\d{1,4}[A-Za-z]?,?\s+(?:[A-Z][a-z'’]+\s+){1,3}(?:Road|Rd|Street|St|Lane|Ln|Avenue|Ave|Close|Court|Crescent|Drive|Way|Place|Square|Gardens|Grove|Hill|Row|Terrace|Walk|Mews|Park|Green|Rise|View)\b/;
const POSTCODE = /\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b/;
const PHONE = /(?:\+44\s?7\d{3}|\b07\d{3})\s?\d{3}\s?\d{3}\b|\+\d{1,3}[\s-]?\d(?:[\s-]?\d){7,12}\b/;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
const BIRTH = /\b(?:born (?:on|in)|date of birth|d\.o\.b|dob|birthday)\b/i;
const THEIR_THING = /\b(?:her|his|their)\s+(?:own\s+)?(?:orders?|account|card|address|phone|mobile|email|e-mail|number|surname|full name|date of birth|birthday|salary|details)\b/i;
const POSSESSED =
  /^(?:\s+[A-Z][a-z'’-]+)?['’]s\s+(?:(?:new|old|own|home|work|mobile|phone|current)\s+)?(?:orders?|account|card|address|number|phone|mobile|email|e-mail|surname|full name|date of birth|birthday|details|password|bank|salary|age)\b/;
const LIVES = /^(?:\s+[A-Z][a-z'’-]+){0,2},?\s+(?:lives|living|lived|moved|moving|has moved|is moving|stays|staying)\b/;
const FIRST_PERSON = /\b(?:me|i|my|mine|myself)\b/i;

/** True when `text` holds another person's personal details rather than the customer's own instruction. */
export function containsThirdPartyDetails(text: string): boolean {
  const contact = PHONE.test(text) || EMAIL.test(text) || BIRTH.test(text);
  if (namesSomeone(text) && (contact || STREET_ADDRESS.test(text) || THEIR_THING.test(text))) return true;
  for (const match of text.matchAll(RELATION)) {
    const rest = text.slice((match.index ?? 0) + match[0].length);
    if (POSSESSED.test(rest)) return true;
    if (LIVES.test(rest) && (STREET_ADDRESS.test(rest) || POSTCODE.test(rest))) return true;
    // The relative's phone or email: a contact detail after them with no "me" or "my" between, so
    // "my husband can sign, or call me on …" is the customer's own number and kept.
    const at = Math.min(...[PHONE, EMAIL, BIRTH].map((re) => rest.search(re)).filter((i) => i >= 0));
    if (Number.isFinite(at) && !FIRST_PERSON.test(rest.slice(0, at))) return true;
  }
  return false;
}
