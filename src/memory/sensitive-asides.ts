// Sensitive asides memory never holds, mentioned however much in passing: the special
// categories of personal data (health, religion or belief, sex life and sexual orientation,
// racial or ethnic origin, political opinions, trade union membership, genetics), criminal
// matters, and other life events a support note has no business keeping (divorce,
// bereavement, money trouble, abuse). Words that only name a place or a product are not
// asides: "Temple Court", "3 Church Road", "the pharmacy next door", "a first aid kit".

/** Which kind of sensitive aside a sentence holds. */
export type AsideKind = 'health' | 'religion' | 'sexuality' | 'ethnicity' | 'politics' | 'trade_union' | 'criminal' | 'personal_matter';

// A church, mosque or temple that is part of an address is a place, not a belief.
const PLACE_SUFFIX =
  '(?!\\s+(?:road|rd|street|st|lane|ln|avenue|ave|close|court|crescent|drive|way|place|square|gardens|grove|hill|row|terrace|walk|mews|park|green|rise|view|hall|house|farm|end|yard|cottages?|meadow|fields?|wharf|quay|car park)\\b)';

const ASIDES: { kind: AsideKind; pattern: RegExp }[] = [
  {
    kind: 'health',
    pattern: new RegExp(
      [
        "(?:long )?covid|down['’]?s? syndrome|cerebral palsy|multiple sclerosis|motor neurone|chronic fatigue|fibromyalgia|crohn['’]?s|coeliac|celiac|sickle cell|cystic fibrosis|lupus|migraines?|diabet\\w*|insulin|pregnan\\w*|miscarr\\w*|ivf|fertility treatment|cancer|tumou?r|chemo\\w*|radiotherapy|dialysis|hiv|aids|std|sti",
        'dementia|alzheimer\\w*|parkinson\\w*|epilep\\w*|seizures?|(?:had|has|suffered|recovering from|after) a stroke|heart (?:attack|condition|disease|surgery)|asthma|inhaler|copd|arthritis',
        'autis\\w*|adhd|dyslexi\\w*|learning (?:disabilit\\w*|difficult\\w*)|depress(?:ed|ion)|anxiety|panic attacks?|mental health|bipolar|schizophreni\\w*|ptsd|ocd|eating disorder|anorexi\\w*|bulimi\\w*|self[- ]harm|suicid\\w*',
        'disabilit\\w*|disabled(?!\\s+(?:parking|bay|access|toilet|entrance|ramp|space))|wheelchair|mobility scooter|crutches|walking frame|zimmer|(?:is|registered|went|going) blind|partially sighted|visually impaired|deaf|hard of hearing|hearing aids?|carers?|care home|nursing home',
        "medications?|medicines?|prescriptions?|diagnos\\w*|therap(?:y|ies|ist)|physio\\w*|counsell?ing|rehab|addiction|alcoholi\\w*|overdose|illness|(?:is|was|been|fell|feeling|seriously|terminally|very) (?:ill|unwell|sick(?! of| and tired))|off sick|sick(?:ness| leave| note)|chronic (?:pain|illness|condition|fatigue)|disease|allerg(?:y|ies|ic)|injur(?:y|ies|ed)|broken (?:leg|arm|wrist|hip|ankle|foot|back)|surgery(?<!(?:gp|doctor['’]?s|dental|vet['’]?s|dentist['’]?s) surgery)|(?:had|has|having|after|recovering from|booked in for|waiting for|needs) (?:an? |her |his |my )?(?:\\w+ )?(?:operation|surgery)|(?:knee|hip|joint) replacement",
        "(?:in|into|out of|admitted to|discharged from|released from|stay in|staying in) (?:the )?hospital(?!\\s+(?:car park|reception|entrance|shop|canteen|grounds))|hospitali[sz]\\w*|hospital (?:appointments?|stay|visits?|treatment)|(?:doctor|gp|consultant|specialist|hospital)['’]?s? appointments?|(?:see|seeing|saw|visit|visiting) (?:a|the|my|her|his) (?:doctor|gp|consultant|specialist)|(?:doctor|gp) (?:said|says|told)",
      ].join('|'),
    ),
  },
  {
    kind: 'religion',
    pattern: new RegExp(
      [
        "religio\\w*|muslims?|islam\\w*|christians?|catholics?|protestants?|anglicans?|evangelical|jewish|jews?|judaism|hindus?|hinduism|sikhs?|sikhism|buddhists?|buddhism|atheists?|agnostic|mormons?|jehovah['’]?s witness(?:es)?|quakers?|pagan",
        'ramadan|eid|diwali|passover|yom kippur|rosh hashanah|shabbat|sabbath|kosher|halal|pray(?:s|ed|ing|ers?)?|(?:my|her|his|their) faith|(?:goes|go|going|went|attends?|attending|at|from|to|after|before) (?:the )?(?:church|mosque|synagogue|temple|gurdwara|mandir|chapel|mass)' +
          PLACE_SUFFIX,
      ].join('|'),
    ),
  },
  {
    kind: 'sexuality',
    pattern:
      /gay|lesbian|bisexual|queer|homosexual|heterosexual|transgender|trans (?:woman|man|person)|non-binary|sexual orientation|sexuality|sex life|came out|coming out|gender (?:identity|reassignment|transition)/,
  },
  {
    kind: 'ethnicity',
    pattern:
      /ethnic\w*|racial\w*|racis[mt]\w*|(?:my|her|his|their) race|skin colou?r|of \w+ (?:descent|heritage|origin)|immigration status|asylum|refugee|undocumented|deport\w*|visa status/,
  },
  {
    kind: 'politics',
    pattern:
      /political\w*|politics|vot(?:es|ed|ing|er) (?:for |against )?(?:labour|conservatives?|tory|tories|lib dems?|liberal democrats?|green|reform|snp|plaid|democrats?|republicans?|ukip)|(?:labour|conservative|tory|green|reform|democratic|republican) (?:party|voter|supporter|member|councillor|activist)|party member(?:ship)?|member of the \w+ party/,
  },
  {
    kind: 'trade_union',
    pattern: /trade unions?|union (?:member|membership|rep|representative|official|steward)|member of (?:the )?\w+ union/,
  },
  {
    kind: 'criminal',
    pattern:
      /criminal (?:record|conviction|charges?|past)|convicted|conviction|arrested|on probation|parole|prison|jail|in custody|offender|charged with (?:an? )?(?:offence|crime|assault|theft|fraud)|restraining order|court order against/,
  },
  {
    kind: 'personal_matter',
    pattern:
      /divorc\w*|separated from|bereave\w*|passed away|(?:husband|wife|partner|mother|father|mum|dad|son|daughter|brother|sister|child|baby) died|funeral|widow(?:ed|er)?|domestic (?:abuse|violence)|abusive (?:ex|partner|husband|wife)|women['’]?s refuge|bankrupt\w*|insolven\w*|debt collectors?|in debt|on benefits|universal credit|food banks?|lost (?:her|his|my|their) job|genetic|dna test/,
  },
];

const COMPILED = ASIDES.map(({ kind, pattern }) => ({ kind, pattern: new RegExp(`\\b(?:${pattern.source})\\b`, 'i') }));

/** The kind of sensitive aside `text` holds, or null when it holds none. */
export function findAside(text: string): AsideKind | null {
  for (const { kind, pattern } of COMPILED) if (pattern.test(text)) return kind;
  return null;
}
