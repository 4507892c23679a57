/**
 * Writing XML 1.0 as text: escaping for element content and attribute values, and a small
 * element builder. Characters XML 1.0 cannot carry at all (C0 controls other than tab and line
 * breaks, U+FFFE/U+FFFF, unpaired surrogates) are dropped: no escape can express them.
 */

// Tab, LF, CR, then U+0020 up: everything else below U+0020, the two non-characters and lone surrogates.
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text for element content. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, "").replace(/[&<>]/g, (char) => (char === "&" ? "&amp;" : char === "<" ? "&lt;" : "&gt;"));
}

const ATTRIBUTE_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};

/** Text for a double-quoted attribute value (line breaks and tabs as references, so they survive attribute normalisation). */
export function xmlAttribute(text: string): string {
  return text.replace(NOT_XML, "").replace(/[&<>"\t\n\r]/g, (char) => ATTRIBUTE_ESCAPES[char]!);
}

/** An element: `children` is XML already (from `element` or `xmlText`); null or empty attribute values are left out. */
export function element(name: string, attributes: Readonly<Record<string, string | null | undefined>>, ...children: string[]): string {
  const attrs = Object.entries(attributes)
    .filter((entry): entry is [string, string] => entry[1] !== null && entry[1] !== undefined)
    .map(([key, value]) => ` ${key}="${xmlAttribute(value)}"`)
    .join("");
  const content = children.join("");
  return content === "" ? `<${name}${attrs}/>` : `<${name}${attrs}>${content}</${name}>`;
}

/** An element holding text. */
export const textElement = (name: string, text: string, attributes: Readonly<Record<string, string | null | undefined>> = {}): string =>
  element(name, attributes, xmlText(text));
