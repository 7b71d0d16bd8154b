/**
 * The JavaScript conversion of a walk's keyset pages (store/record-money.ts) against the stores'
 * `div_half_even` rule and the planner's formula (CONTRACT §3 rule 7), worked out by hand.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dayRateKey, divHalfEven, MoneyConverter } from "../src/store/record-money.js";

describe("record money in JavaScript", () => {
  it("divides rounding half to even by magnitude, giving negative amounts their sign back", () => {
    // The examples of sql-dialect.ts: -8.5085 → -9, -25.5 → -26, -8.5 → -8.
    assert.equal(divHalfEven(-85_085n, 10_000n), -9n);
    assert.equal(divHalfEven(-255n, 10n), -26n);
    assert.equal(divHalfEven(-85n, 10n), -8n);
    assert.equal(divHalfEven(85n, 10n), 8n);
    assert.equal(divHalfEven(95n, 10n), 10n);
    assert.equal(divHalfEven(86n, 10n), 9n);
    assert.equal(divHalfEven(84n, 10n), 8n);
  });

  it("converts through EUR with the day's rates, and rounds to the target's minor unit", () => {
    const rates = new Map([
      [dayRateKey("EUR", "2021-03-01"), 1_000_000n],
      [dayRateKey("GBP", "2021-03-01"), 850_000n],
      [dayRateKey("JPY", "2021-03-01"), 120_000_000n],
    ]);
    // 1.0000 EUR → 0.85 GBP; 0.8500 GBP → 1.00 EUR; 1.2750 GBP → 180 JPY; 1.2345 GBP stays 1.23 (half-even of 123.45).
    assert.equal(new MoneyConverter("GBP", rates).convert(10_000n, "EUR", "2021-03-01"), 0.85);
    assert.equal(new MoneyConverter("EUR", rates).convert("8500", "GBP", "2021-03-01"), 1);
    assert.equal(new MoneyConverter("JPY", rates).convert(12_750n, "GBP", "2021-03-01"), 180);
    assert.equal(new MoneyConverter("GBP", rates).convert(12_345n, "GBP", "2021-03-01"), 1.23);
    assert.equal(new MoneyConverter("GBP", rates).convert(10_000n, "USD", "2021-03-01"), null);
  });
});
