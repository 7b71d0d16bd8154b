/**
 * The currencies MDQ holds reference rates for: the euro and the currencies of the ECB's
 * euro foreign exchange reference rates. This list is the GraphQL `Currency` enum.
 * `minorUnits` is the ISO 4217 exponent: output money is rounded to it (CONTRACT §3 rule 7).
 */
export const CURRENCIES = {
  EUR: { minorUnits: 2 },
  AUD: { minorUnits: 2 },
  BRL: { minorUnits: 2 },
  CAD: { minorUnits: 2 },
  CHF: { minorUnits: 2 },
  CNY: { minorUnits: 2 },
  CZK: { minorUnits: 2 },
  DKK: { minorUnits: 2 },
  GBP: { minorUnits: 2 },
  HKD: { minorUnits: 2 },
  HUF: { minorUnits: 2 },
  IDR: { minorUnits: 2 },
  ILS: { minorUnits: 2 },
  INR: { minorUnits: 2 },
  ISK: { minorUnits: 0 },
  JPY: { minorUnits: 0 },
  KRW: { minorUnits: 0 },
  MXN: { minorUnits: 2 },
  MYR: { minorUnits: 2 },
  NOK: { minorUnits: 2 },
  NZD: { minorUnits: 2 },
  PHP: { minorUnits: 2 },
  PLN: { minorUnits: 2 },
  RON: { minorUnits: 2 },
  SEK: { minorUnits: 2 },
  SGD: { minorUnits: 2 },
  THB: { minorUnits: 2 },
  TRY: { minorUnits: 2 },
  USD: { minorUnits: 2 },
  ZAR: { minorUnits: 2 },
} as const satisfies Record<string, { minorUnits: number }>;

/** An ISO 4217 code MDQ supports. */
export type CurrencyCode = keyof typeof CURRENCIES;

/** The base of every reference rate: rates are "units of currency per 1 EUR". */
export const BASE_CURRENCY: CurrencyCode = "EUR";

/** Every supported code, EUR first, the rest alphabetical. */
export const CURRENCY_CODES = Object.keys(CURRENCIES) as CurrencyCode[];

/** Whether `code` is a supported currency code. */
export function isCurrencyCode(code: string): code is CurrencyCode {
  return Object.hasOwn(CURRENCIES, code);
}
