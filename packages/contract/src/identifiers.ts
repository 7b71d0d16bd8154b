/**
 * The shapes of the ids the contract names (CONTRACT §3 "Values", docs/admin-api.md): markets are
 * ISO 3166-1 alpha-2 codes, data sources and channels lower-case ids, brands lower-case slugs,
 * regions short lower-case codes. Every check of such an id uses these patterns.
 */

/** A market: an ISO 3166-1 alpha-2 code in upper case (`GB`, `DE`). */
export const MARKET_PATTERN = /^[A-Z]{2}$/;
/** ISO 3166-1 alpha-2: the 249 officially assigned codes (the United Kingdom is GB, not UK). */
export const MARKET_CODES: ReadonlySet<string> = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS
  BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE
  EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM
  HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC
  LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA
  NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW
  SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO
  TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`.split(/\s+/),
);

/** A data source id (`google_ads`): lower-case letters, digits, `_`, `.` and `-`, at most 64. */
export const DATA_SOURCE_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** A channel (`search`): the same lower-case id shape as a data source. */
export const CHANNEL_PATTERN = DATA_SOURCE_PATTERN;
/** A brand id (`brand-acme`): 2 to 63 lower-case letters, digits and `-`. */
export const BRAND_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
/** A region code (`uk`, `us`): 2 to 8 lower-case letters. */
export const REGION_PATTERN = /^[a-z]{2,8}$/;
/** A currency code as written (ISO 4217 shape); whether MDQ supports it is `isCurrencyCode`. */
export const CURRENCY_CODE_PATTERN = /^[A-Z]{3}$/;

/** Whether `text` is a market code (`GB`). */
export function isMarket(text: string): boolean {
  return MARKET_PATTERN.test(text);
}

/** Whether `text` is a data source id (`google_ads`). */
export function isDataSource(text: string): boolean {
  return DATA_SOURCE_PATTERN.test(text);
}

/** Whether `text` is a channel (`search`). */
export function isChannel(text: string): boolean {
  return CHANNEL_PATTERN.test(text);
}

/** Whether `text` is a brand id (`brand-acme`). */
export function isBrandId(text: string): boolean {
  return BRAND_ID_PATTERN.test(text);
}

/** Whether `text` is a region code (`uk`). */
export function isRegion(text: string): boolean {
  return REGION_PATTERN.test(text);
}
