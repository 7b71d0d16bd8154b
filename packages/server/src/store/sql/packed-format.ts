/**
 * The layout of a packed records page, shared by its writer (reads/records/records-plan.ts, the
 * SQL that packs a page) and its reader (reads/records/packed-page.ts).
 */

/** Separates the values of a packed records page (`planPackedRecordsPage`). */
export const PACKED_VALUE_SEPARATOR = "\u0001";

/** Escapes, in a packed page's text values, U+0002 (as U+0002 `b`) and the separator (U+0002 `a`). */
export const PACKED_ESCAPE = "\u0002";
