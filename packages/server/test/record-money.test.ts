/**
 * The JavaScript conversion of a walk's keyset pages (store/sql/record-money.ts) against the stores'
 * `div_half_even` rule and the planner's formula (CONTRACT §3 rule 7), worked out by hand.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { divHalfEven, FxHistory, MoneyConverter } from "../src/store/sql/record-money.js";

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
    const rates = new FxHistory([
      { currency: "GBP", date: "2021-03-01", rateE6: 850_000n },
      { currency: "JPY", date: "2021-03-01", rateE6: 120_000_000n },
    ]);
    // 1.0000 EUR → 0.85 GBP; 0.8500 GBP → 1.00 EUR; 1.2750 GBP → 180 JPY; 1.2345 GBP stays 1.23 (half-even of 123.45).
    assert.equal(new MoneyConverter("GBP", rates).convert(10_000n, "EUR", "2021-03-01"), 0.85);
    assert.equal(new MoneyConverter("EUR", rates).convert("8500", "GBP", "2021-03-01"), 1);
    assert.equal(new MoneyConverter("JPY", rates).convert(12_750n, "GBP", "2021-03-01"), 180);
    assert.equal(new MoneyConverter("GBP", rates).convert(12_345n, "GBP", "2021-03-01"), 1.23);
    assert.equal(new MoneyConverter("GBP", rates).convert(10_000n, "USD", "2021-03-01"), null);
  });

  it("gives the BigInt formula's answer to the bit, in doubles or not, whatever the sizes", () => {
    const reference = (
      amount: bigint,
      targetRate: bigint,
      sourceRate: bigint,
      toMinor: bigint,
      scale: number,
    ) => Number(divHalfEven(amount * targetRate, sourceRate * toMinor)) / scale;
    fc.assert(
      fc.property(
        // Small amounts (the double path) and amounts up to 10^19 (past 2^53: BigInt).
        fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 9n }), fc.bigInt({ min: 0n, max: 10n ** 19n })),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.constantFrom("GBP", "JPY", "EUR"),
        (amount, gbpRate, usdRate, target) => {
          const day = "2021-03-01";
          const rates = new FxHistory([
            { currency: "GBP", date: day, rateE6: gbpRate },
            { currency: "JPY", date: day, rateE6: usdRate },
            { currency: "USD", date: day, rateE6: usdRate },
          ]);
          const converter = new MoneyConverter(target as "GBP" | "JPY" | "EUR", rates);
          const minorUnits = target === "JPY" ? 0 : 2;
          const toMinor = 10n ** BigInt(4 - minorUnits);
          const scale = 10 ** minorUnits;
          const targetRate = rates.rateOn(target, day)!;
          // Both argument forms: a driver's bigint and the text of a text page.
          assert.equal(
            converter.convert(amount, "USD", day),
            reference(amount, targetRate, usdRate, toMinor, scale),
          );
          assert.equal(
            converter.convert(String(amount), "USD", day),
            reference(amount, targetRate, usdRate, toMinor, scale),
          );
          assert.equal(
            converter.convert(String(amount), target, day),
            Number(divHalfEven(amount, toMinor)) / scale,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("takes a day's rate, else the latest earlier one, none before the first; EUR's is 1", () => {
    const rates = new FxHistory([
      { currency: "GBP", date: "2021-03-05", rateE6: 860_000n },
      { currency: "GBP", date: "2021-03-01", rateE6: 850_000n },
      { currency: "USD", date: "2021-03-02", rateE6: 1_200_000n },
    ]);
    assert.equal(rates.rateOn("GBP", "2021-02-28"), undefined);
    assert.equal(rates.rateOn("GBP", "2021-03-01"), 850_000n);
    assert.equal(rates.rateOn("GBP", "2021-03-04"), 850_000n);
    assert.equal(rates.rateOn("GBP", "2021-03-05"), 860_000n);
    assert.equal(rates.rateOn("GBP", "2030-01-01"), 860_000n);
    assert.equal(rates.rateOn("USD", "2021-03-01"), undefined);
    assert.equal(rates.rateOn("JPY", "2021-03-03"), undefined);
    assert.equal(rates.rateOn("EUR", "1999-01-01"), 1_000_000n);
  });
});
