// The engine's own RegExp, number formatting and URL parser for schema
// validation (src/js/validate.rs, json::schema::Host), and TypeBox's legacy kind check.

export const hasLegacyTypeBoxKind = (schema) => Object.getOwnPropertySymbols(schema).includes(Symbol.for("TypeBox.Kind"));

export function regexTest(pattern, flags, text) {
  try {
    return new RegExp(pattern, flags).test(text);
  } catch (e) {
    return String(e.message);
  }
}

export const numberToString = (n) => String(n);

export const stringToNumber = (s) => Number(s);

export const urlCanParse = (url, base) => URL.canParse(url, base);
