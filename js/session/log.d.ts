// The session log's reader, for tools that inspect a log (pi-agent-wasm/session uses it).
export declare const SESSION_LOG_VERSION: 1;
export declare class SessionLogError extends Error {}
/** The records of a log; `dropped`: characters after the last good record. Throws only for another version. */
export declare function readLog(text: string, continued?: boolean): { records: { t: string; [key: string]: unknown }[]; header: boolean; dropped: number };
export declare function logHeader(): string;
export declare function logLine(record: { t: string; [key: string]: unknown }): string;
/** Pushes a record's log text onto `out` in pieces (its line, then its raw text, if any), for the caller to join once. */
export declare function pushRecord(record: { t: string; [key: string]: unknown }, out: string[]): void;
