// The labelled set of the memory-quality benchmark (issue 11): what one customer tells
// support over a year and a half, one fact a few days apart, in the order written; questions
// an agent might ask of that memory, in other words (paraphrase) or in the same words
// (lexical), each labelled with the facts that answer it; and the pairs where a later fact
// truly replaces an earlier one, or must not. Written by hand for this benchmark; no fact holds
// anything the privacy screen refuses.

/** One fact, in the order the customer stated it. */
export interface BenchFact {
  id: string;
  text: string;
}

/** A question and the facts that answer it (any one of them counts). */
export interface BenchQuestion {
  q: string;
  expect: string[];
}

/** The facts, oldest first. */
export const FACTS: BenchFact[] = [
  { id: 'f01', text: 'Deliveries to my flat must go to Block B, not the main gate' },
  { id: 'f02', text: 'My neighbour at number 12 is happy to take in parcels' },
  { id: 'f03', text: 'If nobody is in, the safe place is behind the green bin' },
  { id: 'f04', text: 'My dog barks at couriers, so leave parcels in the porch box' },
  { id: 'f05', text: 'I work nights, so please do not call me before noon' },
  { id: 'f06', text: 'Email me rather than phoning' },
  { id: 'f07', text: 'I prefer a replacement to a refund when something arrives broken' },
  { id: 'f08', text: 'I find automated phone menus frustrating and want to speak to a person' },
  { id: 'f09', text: 'I run a small bakery and order packaging in bulk every month' },
  { id: 'f10', text: 'The intercom at the entrance has been broken since the spring' },
  { id: 'f11', text: 'My flat is on the fourth floor and the lift is often out of order' },
  { id: 'f12', text: 'I would like replies in Spanish' },
  { id: 'f13', text: 'I am away visiting family every August' },
  { id: 'f14', text: 'Orders over fifty pounds should come with a signature on delivery' },
  { id: 'f15', text: 'I live at 22 Oak Road, Leeds' },
  { id: 'f17', text: 'The courier usually arrives after six in the evening' },
  { id: 'f18', text: 'I was charged twice for order 4471 in October' },
  { id: 'f19', text: 'The parcel for order 4471 was left at the wrong building' },
  { id: 'f20', text: 'I always recycle the cardboard, so please avoid plastic packaging' },
  { id: 'f21', text: 'I order gifts for the holidays every November' },
  { id: 'f22', text: 'Saturday mornings are the best time for deliveries' },
  { id: 'f23', text: 'I have a parking permit, so the van can use the bay outside' },
  { id: 'f24', text: 'Texts are fine for delivery updates but not for marketing' },
  { id: 'f25', text: 'I no longer want the printed catalogue sent to me' },
  { id: 'f26', text: 'The building has a concierge desk that is open until 8pm' },
  { id: 'f27', text: 'I prefer eco-friendly shipping even if it is slower' },
  { id: 'f28', text: 'Linwood is my favourite brand' },
  { id: 'f29', text: 'I work from home on Mondays and Fridays' },
  { id: 'f30', text: 'The buzzer for flat 4 is still labelled with my old surname' },
  { id: 'f31', text: 'I am left-handed and look for left-handed scissors' },
  { id: 'f32', text: 'Last winter a parcel froze on the doorstep, so I worry about cold weather' },
  { id: 'f33', text: 'I buy mostly during the January sales' },
  { id: 'f34', text: 'Please do not leave parcels with the shop downstairs' },
  { id: 'f35', text: 'The doorbell does not work, so please knock' },
  { id: 'f36', text: 'I have two cats, so the front door cannot be left open' },
  { id: 'f37', text: 'I volunteer at the library on Tuesday afternoons' },
  { id: 'f38', text: 'I want invoices addressed to my business name, Rise Bakery' },
  { id: 'f39', text: 'I would now prefer a refund rather than a replacement' },
  { id: 'f40', text: 'I have moved to 5 Elm Street, York' },
  { id: 'f41', text: 'Please write to me in English from now on' },
  { id: 'f42', text: 'Weekday evenings now suit me best for deliveries' },
  { id: 'f43', text: 'Please phone me now instead of emailing' },
  { id: 'f44', text: 'The safe place is now inside the recycling shed, not behind the bin' },
  { id: 'f45', text: 'Our stairwell is dark, so couriers often miss the door' },
  { id: 'f46', text: 'My favourite brand is now Ashcombe, not Linwood' },
  { id: 'f47', text: 'I usually order homeware and kitchen items' },
  { id: 'f48', text: 'My last name changed when I got married in June' },
];

/** Later facts that truly replace an earlier one: [older, newer]. */
export const REPLACEMENTS: [string, string][] = [
  ['f07', 'f39'],
  ['f15', 'f40'],
  ['f12', 'f41'],
  ['f22', 'f42'],
  ['f06', 'f43'],
  ['f03', 'f44'],
  ['f28', 'f46'],
];

/** Later facts on the same topic that must NOT replace an earlier one: [older, newer]. */
export const MUST_KEEP: [string, string][] = [
  ['f01', 'f02'],
  ['f01', 'f03'],
  ['f01', 'f04'],
  ['f05', 'f06'],
  ['f01', 'f26'],
  ['f01', 'f34'],
  ['f06', 'f24'],
  ['f17', 'f42'],
  ['f05', 'f43'],
  ['f04', 'f44'],
  ['f01', 'f45'],
  ['f20', 'f27'],
  ['f30', 'f48'],
];

/**
 * Questions in other words than the fact (little word overlap): the tuning set. Recall's
 * constants and its query and note handling were chosen by measuring on these, so their
 * figures flatter it; PARAPHRASE_HELD_OUT below is the honest measure.
 */
export const PARAPHRASE: BenchQuestion[] = [
  { q: 'where should the driver drop off packages for my apartment?', expect: ['f01'] },
  { q: 'is there someone next door who can accept a delivery?', expect: ['f02'] },
  { q: "what's the fallback spot if I'm out?", expect: ['f44'] },
  { q: 'does the customer have a pet that bothers drivers?', expect: ['f04'] },
  { q: 'when is it too early to ring this person?', expect: ['f05'] },
  { q: 'how would they like us to get in touch?', expect: ['f43'] },
  { q: 'what do they want when an item turns up damaged?', expect: ['f39'] },
  { q: 'does she dislike talking to a robot on the line?', expect: ['f08'] },
  { q: 'what kind of business does she own?', expect: ['f09', 'f38'] },
  { q: 'can visitors use the door entry system?', expect: ['f10'] },
  { q: 'is it hard to carry heavy boxes up to their home?', expect: ['f11'] },
  { q: 'which language should our answers be in?', expect: ['f41'] },
  { q: 'when are they usually on holiday?', expect: ['f13'] },
  { q: 'do expensive purchases need to be signed for?', expect: ['f14'] },
  { q: 'what is her home address?', expect: ['f40'] },
  { q: 'what time of day does the van normally show up?', expect: ['f17'] },
  { q: 'was she ever billed two times for the same purchase?', expect: ['f18'] },
  { q: 'did a package ever go to the incorrect address?', expect: ['f19'] },
  { q: 'what are her views on wrapping materials and the environment?', expect: ['f20', 'f27'] },
  { q: 'does she shop for presents at a particular time of year?', expect: ['f21'] },
  { q: 'when would she like her orders brought round?', expect: ['f42'] },
  { q: 'is there somewhere for the driver to park?', expect: ['f23'] },
  { q: 'is she happy to receive SMS messages?', expect: ['f24'] },
  { q: 'should we mail her the paper brochure?', expect: ['f25'] },
  { q: 'is there staff in the lobby who could hold items?', expect: ['f26'] },
  { q: 'does she care about greener transport options?', expect: ['f27'] },
  { q: 'which manufacturer does she like most?', expect: ['f46'] },
  { q: 'on which days is she not at the office?', expect: ['f29'] },
  { q: 'why might a courier not find her name on the bell panel?', expect: ['f30', 'f48'] },
  { q: 'which hand does she write with?', expect: ['f31'] },
  { q: 'has frost ever spoiled one of her deliveries?', expect: ['f32'] },
  { q: 'when does she tend to do most of her shopping?', expect: ['f33', 'f21'] },
  { q: 'may we hand her package to the store below?', expect: ['f34'] },
  { q: 'how should the driver announce they have arrived?', expect: ['f35'] },
  { q: 'does she have animals at home?', expect: ['f36', 'f04'] },
  { q: 'is she ever unavailable midweek because of unpaid work?', expect: ['f37'] },
  { q: 'whose name should appear on the bills?', expect: ['f38'] },
  { q: 'where does she live these days?', expect: ['f40'] },
  { q: 'can she be telephoned in the morning?', expect: ['f05'] },
  { q: 'why do drivers struggle to locate her entrance?', expect: ['f45'] },
  { q: 'what sort of products does she generally buy?', expect: ['f47'] },
  { q: 'did her surname change recently?', expect: ['f48', 'f30'] },
  { q: 'where can a parcel be hidden when nobody is home?', expect: ['f44'] },
];

/**
 * Held-out paraphrase questions: written before recall was tuned on PARAPHRASE, and never
 * used to choose anything (a change is kept or dropped on the tuning set's figures alone).
 * Same rules: other words than the fact, labelled with every current fact that answers.
 */
export const PARAPHRASE_HELD_OUT: BenchQuestion[] = [
  { q: 'which part of the estate should couriers take her orders to?', expect: ['f01'] },
  { q: 'could the person living two doors down sign for a box?', expect: ['f02'] },
  { q: 'is there an animal that makes delivery staff nervous?', expect: ['f04'] },
  { q: 'what hours is she asleep after a night shift?', expect: ['f05'] },
  { q: 'what channel does she prefer for contact?', expect: ['f43'] },
  { q: 'if a product is faulty on arrival, does she want her money back?', expect: ['f39'] },
  { q: 'does she get annoyed by recorded voice options when she rings?', expect: ['f08'] },
  { q: 'what does she do for a living?', expect: ['f09', 'f38'] },
  { q: 'does the entry phone at the front work?', expect: ['f10'] },
  { q: 'how many storeys up is her home, and is there an elevator?', expect: ['f11'] },
  { q: 'what language does she want our messages in?', expect: ['f41'] },
  { q: 'is there a month when she is not around to receive parcels?', expect: ['f13'] },
  { q: 'does a pricey parcel need someone to sign?', expect: ['f14'] },
  { q: 'where is she based now?', expect: ['f40'] },
  { q: 'at what hour does the delivery driver tend to come?', expect: ['f17'] },
  { q: 'has she had a duplicate payment taken?', expect: ['f18'] },
  { q: 'has a delivery of hers ended up in another block by mistake?', expect: ['f19'] },
  { q: 'what does she think of single-use wrapping materials?', expect: ['f20', 'f27'] },
  { q: 'does she buy Christmas presents from us?', expect: ['f21'] },
  { q: 'can the delivery vehicle stop right outside her place?', expect: ['f23'] },
  { q: 'may we message her phone with promotions?', expect: ['f24'] },
  { q: 'does she want our brochure posted to her?', expect: ['f25'] },
  { q: 'until what time is the front desk staffed?', expect: ['f26'] },
  { q: 'is slower but greener delivery ok for her?', expect: ['f27'] },
  { q: 'which label does she like best at the moment?', expect: ['f46'] },
  { q: 'when is she home during the working week?', expect: ['f29'] },
  { q: 'why might the name at her door be out of date?', expect: ['f30', 'f48'] },
  { q: 'is she right-handed?', expect: ['f31'] },
  { q: 'is she worried about deliveries in icy temperatures?', expect: ['f32'] },
  { q: 'what time of year does she buy the most?', expect: ['f33', 'f21'] },
  { q: 'can the store beneath her flat hold her deliveries?', expect: ['f34'] },
  { q: 'should the courier ring the bell when they get there?', expect: ['f35'] },
  { q: 'why must the entrance stay closed during a delivery?', expect: ['f36'] },
  { q: 'what charity work does she do each week?', expect: ['f37'] },
  { q: 'what should the billing paperwork be made out to?', expect: ['f38'] },
  { q: 'is her staircase poorly lit?', expect: ['f45'] },
  { q: 'what categories of goods does she usually purchase?', expect: ['f47'] },
  { q: 'has her family name been updated after her wedding?', expect: ['f48', 'f30'] },
  { q: 'where can the courier leave something if she is out?', expect: ['f44'] },
  { q: 'at what time of the week is it best to bring her orders?', expect: ['f42'] },
  { q: 'do couriers have trouble getting upstairs with heavy items?', expect: ['f11'] },
  { q: 'what should a driver do since the bell is broken?', expect: ['f35'] },
];

/** Questions that share words with the fact. */
export const LEXICAL: BenchQuestion[] = [
  { q: 'Block B', expect: ['f01'] },
  { q: 'main gate', expect: ['f01'] },
  { q: 'neighbour at number 12', expect: ['f02'] },
  { q: 'recycling shed', expect: ['f44'] },
  { q: 'porch box', expect: ['f04'] },
  { q: 'call before noon', expect: ['f05'] },
  { q: 'order 4471 charged twice', expect: ['f18'] },
  { q: 'wrong building', expect: ['f19'] },
  { q: 'concierge desk', expect: ['f26'] },
  { q: 'Rise Bakery invoices', expect: ['f38'] },
  { q: 'Elm Street', expect: ['f40'] },
  { q: 'Ashcombe brand', expect: ['f46'] },
  { q: 'intercom broken', expect: ['f10'] },
  { q: 'printed catalogue', expect: ['f25'] },
  { q: 'January sales', expect: ['f33'] },
  { q: 'parking permit', expect: ['f23'] },
];
