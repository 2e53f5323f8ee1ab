/** What kind of markdown block a `TextBlock` is (from its first line). */
export type TextBlockType = "paragraph" | "heading" | "list" | "code" | "quote";

/** One block of a message's text: frozen; a finished block is the same object in every later view. */
export interface TextBlock {
  /** Its position in the text: 0, 1, 2…; the last block keeps its key while it grows. */
  readonly key: number;
  readonly type: TextBlockType;
  /** The block's text, with the blank lines that end it. The blocks' texts joined are the whole text. */
  readonly text: string;
  /** A code fence's language (its info string's first word; "" for none or an indented code block). */
  readonly lang?: string;
}

/** The blocks of a text, as `createTextBlocks(…).update(text)` returns them. */
export interface TextBlocksView {
  /** The text split. */
  readonly text: string;
  /**
   * Every block, in order, in groups of at most 32. Every group but the last holds finished blocks only
   * and keeps its identity from view to view.
   */
  readonly groups: readonly (readonly TextBlock[])[];
  /** How many blocks are finished (the first `done`): they never change again. */
  readonly done: number;
  /** The block that may still grow (the last one), or `undefined` for an empty text. */
  readonly last: TextBlock | undefined;
}

export interface TextBlocksOptions {
  /** Split at markdown blocks (true, the default) or only at blank lines (false). */
  markdown?: boolean;
}

/** A splitter of one streaming message's text: `update(text)` with the text so far, per change. */
export interface TextBlocksSplitter {
  /**
   * The blocks of `text`. Reads only what was appended since the last call (and the last block); a
   * text that does not continue the last one is split again from its start. The same `text` returns
   * the same view.
   */
  update(text: string): TextBlocksView;
}

/** A splitter for one message (give each message its own). */
export declare function createTextBlocks(options?: TextBlocksOptions): TextBlocksSplitter;

/**
 * The CSS a group's element gets: `content-visibility` (the browser skips the style, layout and paint
 * of groups off screen) and a height estimated from the text until the group is first laid out;
 * `undefined` for "visible".
 */
export declare function groupStyle(
  blocks: readonly TextBlock[],
  contentVisibility?: "auto" | "visible",
): { contentVisibility: string; containIntrinsicSize: string } | undefined;

export interface MountTextBlocksOptions extends TextBlocksOptions {
  /** Fills a block's element (default: its `textContent` is the block's text). Called once per block text. */
  render?: (block: TextBlock, element: HTMLElement) => void;
  /** Makes a block's element (default: a `<div>`); it gets `data-block="<type>"`. */
  element?: (block: TextBlock) => HTMLElement;
  /** "auto" (default): groups of blocks off screen are not laid out; "visible": every block is. */
  contentVisibility?: "auto" | "visible";
}

/**
 * Renders a streaming text into `container` without a framework: one element per block (in one
 * `<div data-block-group>` per 32 blocks), appended as blocks start; an update renders only the blocks that changed, and a finished block's element is never
 * touched again.
 */
export declare function mountTextBlocks(
  container: HTMLElement,
  options?: MountTextBlocksOptions,
): { update(text: string): void; destroy(): void };
