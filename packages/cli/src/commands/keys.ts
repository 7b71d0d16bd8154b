/** `mdq keys rotate|list`: the token endpoint's signing keys. */
import { Command } from "commander";
import { connectAdmin, type KeyInfo } from "../admin-client.js";
import { type CommonFlags, withCommonFlags } from "../operator-options.js";
import { emit, orNone, table } from "../output.js";

/** `mdq keys` and its subcommands. */
export function keysCommand(): Command {
  return new Command("keys")
    .description("Rotate and list the keys that sign access tokens.")
    .addCommand(keysRotateCommand())
    .addCommand(keysListCommand());
}

function keysRotateCommand(): Command {
  return withCommonFlags(
    new Command("rotate").description(
      "Sign new tokens with a new key; old keys stay in the JWKS until their last token expires.",
    ),
    "mdq keys rotate",
  ).action(async (flags: CommonFlags) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.post<{ key: KeyInfo }>("/admin/keys/rotate");
    emit(
      flags.json,
      answer,
      ({ key }) =>
        `New signing key ${key.kid} (${key.alg}) is active since ${key.createdAt}; ` +
        "tokens signed by older keys stay valid until they expire.",
    );
  });
}

function keysListCommand(): Command {
  return withCommonFlags(
    new Command("list").description("List the signing keys, the active one first."),
    "mdq keys list",
  ).action(async (flags: CommonFlags) => {
    const admin = await connectAdmin(flags);
    const answer = await admin.get<{ keys: KeyInfo[] }>("/admin/keys");
    emit(flags.json, answer, ({ keys }) =>
      table(
        ["KID", "ALG", "STATUS", "CREATED AT", "RETIRED AT"],
        [...keys]
          .sort((a, b) => Number(b.active) - Number(a.active))
          .map((key) => [
            key.kid,
            key.alg,
            key.active ? "active" : "retired",
            key.createdAt,
            orNone(key.retiredAt),
          ]),
      ),
    );
  });
}
