/**
 * The text of a data version as callers see it (`dataVersion`, `since`): opaque to them, but
 * `<region>.<version>` here, so that a version of another region is told apart from one of this
 * region, and one this region never issued (from the future) from one it did.
 */

/** A store version as the text callers see. */
export function dataVersionText(region: string, version: bigint | string): string {
  return `${region}.${version}`;
}

/** The largest version a store holds: versions are BIGINT (signed 64-bit) in both stores. */
export const MAX_DATA_VERSION = 2n ** 63n - 1n;

/**
 * The store version of a caller's `since`; undefined when it is not a version of `region`, or is
 * past the largest a store can hold (such a number would overflow the SQL comparison).
 */
export function parseDataVersion(region: string, text: string): bigint | undefined {
  const prefix = `${region}.`;
  if (!text.startsWith(prefix)) return undefined;
  const digits = text.slice(prefix.length);
  if (!/^(?:0|[1-9][0-9]{0,18})$/.test(digits)) return undefined;
  const version = BigInt(digits);
  return version <= MAX_DATA_VERSION ? version : undefined;
}
