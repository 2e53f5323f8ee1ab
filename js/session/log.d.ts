// The session log's reader, for tools that inspect a log (pi-agent-wasm/session uses it).
export declare const SESSION_LOG_VERSION: 1;
export declare class SessionLogError extends Error {}
/**
 * The records of a log. `dropped`: characters after the last good record. `damage`: what stopped the reading in the
 * middle of the log (records missing, a damaged record followed by later ones), undefined for a whole log or a torn
 * tail. Throws only for another version. With `continued`, `text` is what follows the `before` records read already.
 */
export declare function readLog(
  text: string,
  continued?: boolean,
  before?: number,
): { records: { t: string; [key: string]: unknown }[]; header: boolean; dropped: number; damage: string | undefined };
export declare function logHeader(): string;
/** One record as log text, without its position. */
export declare function logLine(record: { t: string; [key: string]: unknown }): string;
/** A record's text made by `logLine`, given its position `i` in the log (the session numbers its records from 1). */
export declare function numberLine(text: string, i: number): string;
/** Pushes a record's log text onto `out` in pieces (its line, then its raw text, if any), for the caller to join once. */
export declare function pushRecord(record: { t: string; [key: string]: unknown }, out: string[], i?: number): void;
