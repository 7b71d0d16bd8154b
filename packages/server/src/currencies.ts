/** The currencies MDQ holds reference rates for: the contract's list (`@mdq/contract`), for server modules. */
export { BASE_CURRENCY, CURRENCIES, CURRENCY_CODES, type CurrencyCode, isCurrencyCode } from "@mdq/contract";
