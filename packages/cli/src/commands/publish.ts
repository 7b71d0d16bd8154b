/** `mdq publish`: mark a brand's processing date as ready (what `marketingDataReadiness` reports). */
import { Command } from "commander";
import { connectAdmin } from "../admin-client.js";
import { type CommonFlags, calendarDate, withCommonFlags } from "../operator-options.js";
import { emit } from "../output.js";

/** The answer of `POST /admin/publishes`. */
interface PublishAnswer {
  brandId: string;
  processingDate: string;
  publishedAt: string;
}

/** `mdq publish --brand B [--date D]`. */
export function publishCommand(): Command {
  return withCommonFlags(
    new Command("publish")
      .description("Publish a brand's loaded data for a processing date: readiness turns READY.")
      .requiredOption("--brand <brandId>", "the brand")
      .option(
        "--date <processingDate>",
        "the processing date, which must have a load (default: today)",
        calendarDate,
      ),
    "mdq publish --brand brand-acme --date 2026-05-01",
  ).action(async (flags: CommonFlags & { brand: string; date?: string }) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.post<PublishAnswer>("/admin/publishes", {
      brandId: flags.brand,
      ...(flags.date === undefined ? {} : { processingDate: flags.date }),
    });
    emit(
      flags.json,
      answer,
      (published) =>
        `Published brand ${published.brandId} for ${published.processingDate} at ${published.publishedAt}.`,
    );
  });
}
