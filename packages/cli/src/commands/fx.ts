/** `mdq fx load`: load FX reference rates (units per 1 EUR, by day) from a file on this machine. */
import { Command } from "commander";
import { connectAdmin } from "../admin-client.js";
import { type CommonFlags, existingFile, withCommonFlags } from "../operator-options.js";
import { emit, orNone } from "../output.js";

/** The answer of `POST /admin/fx`. */
interface FxLoadAnswer {
  rates: number;
  currencies: number | string[];
  /** Unsupported currencies skipped with --ignore-unknown-currencies (beyond docs/admin-api.md). */
  ignoredCurrencies?: string[];
  from: string | null;
  to: string | null;
}

/** `mdq fx` and its subcommand. */
export function fxCommand(): Command {
  return new Command("fx").description("Load FX reference rates.").addCommand(fxLoadCommand());
}

function fxLoadCommand(): Command {
  return withCommonFlags(
    new Command("load")
      .description("Load FX rates from a CSV file: the ECB's wide layout or date,currency,rate.")
      .argument("<file>", "the rates file (read by the service; sent as an absolute path)")
      .option(
        "--ignore-unknown-currencies",
        "skip currencies MDQ does not support instead of refusing the file",
      ),
    "mdq fx load ./eurofxref-hist.csv --ignore-unknown-currencies",
  ).action(async (file: string, flags: CommonFlags & { ignoreUnknownCurrencies?: boolean }) => {
    const path = existingFile(file);
    const admin = await connectAdmin(flags);
    const answer = await admin.post<FxLoadAnswer>("/admin/fx", {
      path,
      ...(flags.ignoreUnknownCurrencies ? { ignoreUnknownCurrencies: true } : {}),
    });
    emit(flags.json, answer, (fx) => {
      const codes = Array.isArray(fx.currencies) ? fx.currencies : [];
      const number = Array.isArray(fx.currencies) ? fx.currencies.length : fx.currencies;
      const currencies = `${number} ${number === 1 ? "currency" : "currencies"}${codes.length ? ` (${codes.join(",")})` : ""}`;
      const loaded = `Loaded ${fx.rates} FX rates for ${currencies}, ${orNone(fx.from)} to ${orNone(fx.to)}.`;
      return fx.ignoredCurrencies?.length
        ? `${loaded}\nSkipped unsupported currencies: ${fx.ignoredCurrencies.join(",")}.`
        : loaded;
    });
  });
}
