/** `mdq app create|list|narrow|rotate-secret|revoke`: the apps that authenticate at the token endpoint. */
import { Command } from "commander";
import { type AppInfo, type AppWithSecret, connectAdmin } from "../admin-client.js";
import {
  type CommonFlags,
  dataSources,
  duration,
  markets,
  name,
  withCommonFlags,
} from "../operator-options.js";
import { emit, list, orNone, table, warn } from "../output.js";

/** `mdq app` and its subcommands. */
export function appCommand(): Command {
  return new Command("app")
    .description("Register apps of a brand, rotate their secrets, revoke them.")
    .addCommand(appCreateCommand())
    .addCommand(appListCommand())
    .addCommand(appNarrowCommand())
    .addCommand(appRotateSecretCommand())
    .addCommand(appRevokeCommand());
}

function warnSecretShownOnce(app: AppInfo): void {
  warn(
    `the app client secret is shown only now and cannot be shown again: store it in a secret manager ` +
      `(if it is lost, make a new one with \`mdq app rotate-secret ${app.appClientId}\`)`,
  );
}

function appCreateCommand(): Command {
  return withCommonFlags(
    new Command("create")
      .description("Register an app of a brand and print its client secret, once.")
      .requiredOption("--brand <brandId>", "the brand the app reads")
      .requiredOption("--name <name>", "the app's name", name)
      .option(
        "--markets <codes>",
        "narrow to these of the brand's markets, e.g. GB,DE (default: all)",
        markets,
      )
      .option(
        "--data-sources <ids>",
        "narrow to these of the brand's data sources, e.g. google_ads (default: all)",
        dataSources,
      ),
    'mdq app create --brand brand-acme --name "Acme BI" --markets GB,DE --data-sources google_ads,meta_ads',
  ).action(
    async (
      flags: CommonFlags & { brand: string; name: string; markets?: string[]; dataSources?: string[] },
    ) => {
      const admin = await connectAdmin(flags);
      const answer = await admin.post<AppWithSecret>("/admin/apps", {
        brandId: flags.brand,
        name: flags.name,
        ...(flags.markets === undefined ? {} : { markets: flags.markets }),
        ...(flags.dataSources === undefined ? {} : { dataSources: flags.dataSources }),
      });
      emit(flags.json, answer, ({ app, appClientSecret }) =>
        [
          `Created app ${app.appClientId} (${app.name}) of brand ${app.brandId}.`,
          `  markets:       ${list(app.markets)}`,
          `  data sources:  ${list(app.dataSources)}`,
          "",
          `appClientId:      ${app.appClientId}`,
          `appClientSecret:  ${appClientSecret}`,
        ].join("\n"),
      );
      warnSecretShownOnce(answer.app);
    },
  );
}

function appListCommand(): Command {
  return withCommonFlags(
    new Command("list")
      .description("List apps (never their secrets).")
      .option("--brand <brandId>", "only this brand's apps"),
    "mdq app list --brand brand-acme",
  ).action(async (flags: CommonFlags & { brand?: string }) => {
    const admin = await connectAdmin(flags);
    const query = flags.brand === undefined ? "" : `?${new URLSearchParams({ brandId: flags.brand })}`;
    const answer = await admin.get<{ apps: AppInfo[] }>(`/admin/apps${query}`);
    emit(flags.json, answer, ({ apps }) =>
      apps.length === 0
        ? "No apps."
        : table(
            [
              "APP CLIENT ID",
              "BRAND",
              "NAME",
              "MARKETS",
              "DATA SOURCES",
              "STATUS",
              "OLD SECRET UNTIL",
              "CREATED AT",
            ],
            apps.map((app) => [
              app.appClientId,
              app.brandId,
              app.name,
              list(app.markets),
              list(app.dataSources),
              app.revokedAt === null ? "active" : `revoked ${app.revokedAt}`,
              orNone(app.previousSecretExpiresAt),
              app.createdAt,
            ]),
          ),
    );
  });
}

/** `all` (every one of the brand's) as the empty list the admin API takes for "no narrowing". */
function allOr(parse: (text: string) => string[]) {
  return (text: string): string[] => (text === "all" ? [] : parse(text));
}

function appNarrowCommand(): Command {
  return withCommonFlags(
    new Command("narrow")
      .description(
        "Change the markets or data sources an app is narrowed to; its clients must copy their data again (fullResyncRequired).",
      )
      .argument("<appClientId>", "the app")
      .option("--markets <codes>", "these of the brand's markets, e.g. GB,DE, or all", allOr(markets))
      .option("--data-sources <ids>", "these of the brand's data sources, or all", allOr(dataSources)),
    "mdq app narrow app_0123abcd --markets GB --data-sources all",
  ).action(
    async (appClientId: string, flags: CommonFlags & { markets?: string[]; dataSources?: string[] }) => {
      const admin = await connectAdmin(flags);
      const answer = await admin.post<{ app: AppInfo }>(
        `/admin/apps/${encodeURIComponent(appClientId)}/narrow`,
        {
          ...(flags.markets === undefined ? {} : { markets: flags.markets }),
          ...(flags.dataSources === undefined ? {} : { dataSources: flags.dataSources }),
        },
      );
      emit(flags.json, answer, ({ app }) =>
        [
          `App ${app.appClientId} (${app.name}) of brand ${app.brandId} now reads:`,
          `  markets:       ${list(app.markets)}`,
          `  data sources:  ${list(app.dataSources)}`,
        ].join("\n"),
      );
    },
  );
}

function appRotateSecretCommand(): Command {
  return withCommonFlags(
    new Command("rotate-secret")
      .description("Give an app a new client secret; the old one keeps working for the grace period.")
      .argument("<appClientId>", "the app")
      .option(
        "--grace <duration>",
        "how long the old secret keeps working: 90s, 15m, 24h, 7d or seconds",
        duration,
      ),
    "mdq app rotate-secret app_0123abcd --grace 24h",
  ).action(async (appClientId: string, flags: CommonFlags & { grace?: number }) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.post<AppWithSecret>(
      `/admin/apps/${encodeURIComponent(appClientId)}/rotate-secret`,
      flags.grace === undefined ? {} : { graceSeconds: flags.grace },
    );
    emit(flags.json, answer, ({ app, appClientSecret }) =>
      [
        `New client secret for app ${app.appClientId} (${app.name}).`,
        app.previousSecretExpiresAt === null
          ? "The previous secret no longer works."
          : `The previous secret keeps working until ${app.previousSecretExpiresAt}.`,
        "",
        `appClientId:      ${app.appClientId}`,
        `appClientSecret:  ${appClientSecret}`,
      ].join("\n"),
    );
    warnSecretShownOnce(answer.app);
  });
}

function appRevokeCommand(): Command {
  return withCommonFlags(
    new Command("revoke")
      .description("Revoke an app: its secret and its tokens stop working at once.")
      .argument("<appClientId>", "the app"),
    "mdq app revoke app_0123abcd",
  ).action(async (appClientId: string, flags: CommonFlags) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.post<{ app: AppInfo }>(
      `/admin/apps/${encodeURIComponent(appClientId)}/revoke`,
    );
    emit(
      flags.json,
      answer,
      ({ app }) =>
        `Revoked app ${app.appClientId} (${app.name}) at ${app.revokedAt}: its tokens no longer work.`,
    );
  });
}
