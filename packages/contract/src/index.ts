/**
 * `@mdq/contract`: the public names and rules of MDQ, declared once and imported by the server,
 * the operator CLI and the client SDK. No runtime dependencies.
 */
export * from "./calendar.js";
export * from "./csv-cells.js";
export * from "./currencies.js";
export * from "./duration.js";
export * from "./errors.js";
export * from "./export.js";
export * from "./identifiers.js";
export type * from "./responses.js";
export * from "./vocabulary.js";
