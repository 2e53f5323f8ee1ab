// pi-agent-wasm/blocks: a streaming message's text as blocks (markdown blocks: paragraphs, headings,
// lists, code fences, quotes), so that a UI lays out and renders only what changed. A finished block
// never changes (the same frozen object from update to update); only the last block grows. Each update
// reads the text added since the last one (and the last block, to check that the text grew by
// appending), never the whole text again: the work per update follows the delta, not the answer.
// The adapters (react.js, svelte.js, vue.js) render these blocks; `mountTextBlocks` renders them into a
// DOM element without a framework.

/** Finished blocks are handed out in groups of this many (frozen arrays), so a UI re-renders one group per update. */
const GROUP = 32;

/**
 * A copy of `s` that does not keep the string it was sliced from alive: V8 makes a slice of a long
 * string a view into it, and a finished block kept for the whole conversation would keep every
 * intermediate text of the answer it was cut from.
 */
const detach = (s) => (s.length < 13 ? s : (" " + s).slice(1));

const SPACE = 32;
const TAB = 9;
const CR = 13;

/** Columns of leading indentation of the line starting at `i` (a tab counts 4). */
function indentOf(text, i, end) {
  let n = 0;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === SPACE) n++;
    else if (c === TAB) n += 4;
    else break;
  }
  return n;
}

function firstNonSpace(text, i, end) {
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== TAB) break;
    i++;
  }
  return i;
}

function isBlank(text, i, end) {
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== TAB && c !== CR) return false;
  }
  return true;
}

/** The fence a line opens (``` or ~~~, three or more), as its marker string, or "". */
function fenceOf(text, i, end) {
  const c = text[i];
  if (c !== "`" && c !== "~") return "";
  let j = i;
  while (j < end && text[j] === c) j++;
  if (j - i < 3) return "";
  // A backtick fence's info string has no backtick.
  if (c === "`" && text.slice(j, end).includes("`")) return "";
  return text.slice(i, j);
}

/** Whether the line at `i` (past its indentation) closes the fence `marker`. */
function closesFence(text, i, end, marker) {
  let j = i;
  while (j < end && text[j] === marker[0]) j++;
  return j - i >= marker.length && isBlank(text, j, end);
}

function isHeading(text, i, end) {
  let j = i;
  while (j < end && j - i < 7 && text[j] === "#") j++;
  const n = j - i;
  if (n < 1 || n > 6) return false;
  if (j === end) return true;
  const c = text.charCodeAt(j);
  return c === SPACE || c === TAB || c === CR;
}

function isListItem(text, i, end) {
  const c = text[i];
  let j = i + 1;
  if (c !== "-" && c !== "*" && c !== "+") {
    j = i;
    while (j < end && j - i < 10 && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
    if (j === i || j - i > 9 || (text[j] !== "." && text[j] !== ")")) return false;
    j++;
  }
  if (j === end) return true;
  const d = text.charCodeAt(j);
  return d === SPACE || d === TAB || d === CR;
}

/** The type of a block's text (and a code fence's language), from its first line. */
function classify(text, markdown) {
  if (!markdown) return ["paragraph", undefined];
  const nl = text.indexOf("\n");
  const end = nl < 0 ? text.length : nl;
  if (indentOf(text, 0, end) >= 4) return ["code", ""];
  const p = firstNonSpace(text, 0, end);
  const marker = fenceOf(text, p, end);
  if (marker) return ["code", text.slice(p + marker.length, end).trim().split(/\s/)[0]];
  if (isHeading(text, p, end)) return ["heading", undefined];
  if (isListItem(text, p, end)) return ["list", undefined];
  if (text[p] === ">") return ["quote", undefined];
  return ["paragraph", undefined];
}

function makeBlock(key, text, markdown) {
  const [type, lang] = classify(text, markdown);
  const block = { key, type, text };
  if (lang !== undefined) block.lang = lang;
  return Object.freeze(block);
}

const EMPTY = Object.freeze({ text: "", groups: Object.freeze([]), done: 0, last: undefined });

/**
 * A splitter of one streaming message's text into blocks. `update(text)` takes the message's text
 * whenever it changed (the text so far) and returns a view of its blocks:
 *
 * - `groups`: every block, in order, in groups of at most 32. Every group but the last holds
 *   finished blocks only and keeps its identity from update to update; so does every finished block
 *   (a frozen `{ key, type, text, lang? }`), so a UI that memoises on them renders each once.
 * - `last`: the block that may still grow (the last element of the last group), or `undefined` for an
 *   empty text. Its `key` stays the same until it is finished.
 * - `done`: how many blocks are finished (the first `done` blocks).
 * - `text`: the text given. The blocks' texts joined are exactly this text.
 *
 * A block is finished once the text after it starts another: a heading is a block of its own line; a
 * code fence runs to its closing fence, blank lines included; any other block ends at a blank line
 * followed by a line that does not continue it (a list goes on with indented lines and further items
 * after blank lines, an indented code block with indented lines). The blank lines after a block are the
 * end of its text. With `{ markdown: false }`, blocks are paragraphs separated by blank lines.
 *
 * `update` expects the text to grow by appending, as a streaming message's does; a text that is shorter,
 * or does not continue the last block, is split again from its start (keys start again at 0). Give
 * each message its own splitter.
 */
export function createTextBlocks(options) {
  const markdown = options?.markdown !== false;
  let text = "";
  let view = EMPTY;
  /** Finished blocks: full frozen groups, then the current group. */
  let groups = [];
  let group = [];
  let done = 0;
  // The current (last) block: where it starts, where the next unread line starts, and up to where the
  // line being read is known to have no line break.
  let start = 0;
  let scan = 0;
  let searched = 0;
  // What the current block's lines so far tell: it has a non-blank line; a blank line (or a closed
  // fence, or a heading) ended its content; it is a list, or an indented code block; the fence it is in.
  let content = false;
  let ending = false;
  let list = false;
  let indented = false;
  let fence = "";

  const reset = () => {
    text = "";
    view = EMPTY;
    groups = [];
    group = [];
    done = 0;
    start = scan = searched = 0;
    content = ending = list = indented = false;
    fence = "";
  };

  /** Ends the current block at `at` (the start of the line that begins the next one). */
  const finish = (at) => {
    const last = view.last;
    // The previous update's last block, if it already held exactly this text: the same object.
    const block =
      last !== undefined && last.key === done && last.text.length === at - start
        ? last
        : makeBlock(done, detach(text.slice(start, at)), markdown);
    group.push(block);
    done++;
    if (group.length === GROUP) {
      groups.push(Object.freeze(group));
      group = [];
    }
    start = at;
    content = ending = list = indented = false;
    fence = "";
  };

  /** Reads the complete line [i, end) (`end` at its "\n"). */
  const line = (i, end) => {
    if (fence) {
      const p = firstNonSpace(text, i, end);
      if (closesFence(text, p, end, fence)) {
        fence = "";
        ending = true;
      }
      return;
    }
    if (isBlank(text, i, end)) {
      if (content) ending = true;
      return;
    }
    if (!markdown) {
      if (ending) finish(i);
      content = true;
      ending = false;
      return;
    }
    const indent = indentOf(text, i, end);
    const p = firstNonSpace(text, i, end);
    const item = indent < 4 && isListItem(text, p, end);
    const marker = indent < 4 || list ? fenceOf(text, p, end) : "";
    const heading = indent < 4 && isHeading(text, p, end);
    if (content) {
      const continues = ending
        ? (list && (indent > 0 || item)) || (indented && indent >= 4)
        : !((heading || marker) && !(list && indent > 0));
      if (!continues) finish(i);
    }
    if (!content) {
      content = true;
      list = item;
      indented = indent >= 4;
    }
    ending = heading;
    if (marker) fence = marker;
  };

  return {
    update(next) {
      if (typeof next !== "string") throw new TypeError("update(text): text must be a string");
      if (next === text) return view;
      const last = view.last;
      if (next.length < text.length || (last !== undefined && !next.startsWith(last.text, start))) reset();
      text = next;
      const end = text.length;
      // Each complete line after `scan`, once.
      for (;;) {
        const nl = text.indexOf("\n", Math.max(scan, searched));
        if (nl < 0) {
          searched = end;
          break;
        }
        line(scan, nl);
        scan = searched = nl + 1;
      }
      let tail;
      if (end > start) {
        tail = makeBlock(done, detach(text.slice(start)), markdown);
        if (last !== undefined && last.key === tail.key && last.text === tail.text && last.type === tail.type) tail = last;
      }
      const current = tail === undefined ? group.slice() : [...group, tail];
      const all = current.length > 0 ? [...groups, Object.freeze(current)] : groups.slice();
      view = Object.freeze({ text, groups: Object.freeze(all), done, last: tail });
      return view;
    },
  };
}

const lineCounts = new WeakMap();
/** A block's lines, at about 90 characters a line (counted once per block object). */
function linesOf(block) {
  let lines = lineCounts.get(block);
  if (lines !== undefined) return lines;
  const text = block.text;
  lines = 0;
  let from = 0;
  for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", nl + 1)) {
    lines += Math.ceil((nl - from) / 90) || 1;
    from = nl + 1;
  }
  lines += Math.ceil((text.length - from) / 90);
  lineCounts.set(block, lines);
  return lines;
}

/**
 * The style of a group's element unless `contentVisibility` is "visible": the browser skips the style,
 * layout and paint of groups off screen (`content-visibility: auto`), with a height estimated from the
 * text (1.5em a line) until one is first laid out. Applied per group of 32 blocks, not per block, so
 * that what the browser walks per frame is one element per group.
 */
export function groupStyle(blocks, contentVisibility = "auto") {
  if (contentVisibility === "visible") return undefined;
  let lines = 0;
  for (const block of blocks) lines += linesOf(block);
  return { contentVisibility, containIntrinsicSize: `auto ${(Math.max(1, lines) * 1.5).toFixed(1)}em` };
}

/**
 * Renders a streaming message's text into `container`, without a framework: one element per block
 * (a `<div data-block="<type>">`, or what `options.element` makes), in one `<div data-block-group>`
 * per group of 32 blocks, appended as blocks start; each
 * update renders the blocks that changed (the last one, and any that were finished since) and never
 * touches a finished block's element again. `options.render(block, element)` fills an element (the
 * default sets its `textContent` to the block's text; a markdown renderer would set its content from
 * `block.text`). `options.markdown`: see `createTextBlocks`. `options.contentVisibility`: "auto" (the
 * default: groups off screen are not laid out) or "visible".
 * Returns `{ update(text), destroy() }`.
 */
export function mountTextBlocks(container, options) {
  const render = options?.render ?? ((block, element) => (element.textContent = block.text));
  const visibility = options?.contentVisibility ?? "auto";
  const doc = container.ownerDocument;
  const make = options?.element ?? (() => doc.createElement("div"));
  let splitter = createTextBlocks(options);
  // By key: each block's element and the block object it shows; by group: the group's element and the
  // group array it was styled for.
  let elements = [];
  let shown = [];
  let groupElements = [];
  let styled = [];
  let synced = 0;
  let previous;
  const clear = () => {
    for (const element of groupElements) element.remove();
    elements = [];
    shown = [];
    groupElements = [];
    styled = [];
    synced = 0;
  };
  const show = (block) => {
    let element = elements[block.key];
    if (element === undefined) {
      const g = Math.floor(block.key / GROUP);
      let group = groupElements[g];
      if (group === undefined) {
        group = groupElements[g] = doc.createElement("div");
        group.dataset.blockGroup = "";
        container.appendChild(group);
      }
      element = elements[block.key] = make(block);
      group.appendChild(element);
    }
    if (shown[block.key] === block) return;
    shown[block.key] = block;
    if (element.dataset.block !== block.type) element.dataset.block = block.type;
    render(block, element);
  };
  const blockAt = (view, i) => view.groups[Math.floor(i / GROUP)]?.[i % GROUP];
  return {
    update(text) {
      const view = splitter.update(text);
      if (view === previous) return;
      // A text that did not continue the last one is split again from its start: new elements.
      if (synced > 0 && blockAt(view, synced - 1) !== shown[synced - 1]) clear();
      previous = view;
      const count = view.last === undefined ? view.done : view.done + 1;
      for (let i = synced; i < count; i++) show(blockAt(view, i));
      for (let i = count; i < elements.length; i++) elements[i].remove();
      if (elements.length > count) {
        elements.length = count;
        shown.length = count;
        const groups = Math.ceil(count / GROUP);
        for (let g = groups; g < groupElements.length; g++) groupElements[g].remove();
        groupElements.length = styled.length = groups;
      }
      // The style of the groups that changed (the last one, and one just filled).
      for (let g = Math.floor(synced / GROUP); g < view.groups.length; g++) {
        if (styled[g] === view.groups[g]) continue;
        styled[g] = view.groups[g];
        const style = groupStyle(view.groups[g], visibility);
        if (style) {
          groupElements[g].style.contentVisibility = style.contentVisibility;
          groupElements[g].style.containIntrinsicSize = style.containIntrinsicSize;
        }
      }
      synced = view.done;
    },
    destroy() {
      clear();
      previous = undefined;
      splitter = createTextBlocks(options);
    },
  };
}
