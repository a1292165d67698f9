// Text handed to plotly, shown as written. plotly draws every string it is given (tick labels,
// titles, hover labels, annotations) through its own pseudo-HTML (src/lib/svg_text_utils.js):
// anything between `<` and `>` is a tag — <b>, <i>, <s>, <u>, <sup>, <sub>, <em>, <span>,
// <a href> become formatting or links, <br> a line break, any other tag vanishes — and entities
// (&amp; &lt; &gt; &nbsp; &mu; &times; &plusmn; &deg; and numeric &#…; / &#x…;) become characters.
// So a token `<s>` showed as an empty label and `a<br>b` as "ab". Escaping `&`, `<` and `>` as
// entities leaves no tag to find and turns every entity back into the character it stands for.
// (Line breaks already become spaces there, and `$…$` is LaTeX only where MathJax is loaded,
// which the panel never loads.)

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** `text` as plotly must be given it to show exactly `text`. */
export function plotlyText(text: string): string {
  return text.replace(/[&<>]/g, (character) => ENTITIES[character]);
}
