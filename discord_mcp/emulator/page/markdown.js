// Discord's markdown as DOM nodes. Discord content is untrusted: this file never builds HTML
// from it; every piece of text goes into a text node, and links keep only http(s) addresses.
//
// Blocks: ``` code blocks ```, "> " quotes (">>> " quotes the rest), "-# " subtext, "# " to
// "### " headings, "- " / "* " lists. Inline: `code`, **bold**, *italics* / _italics_,
// __underline__, ~~strike~~, ||spoiler||, [masked](https://links), bare https:// links,
// <@user>, <@&role>, <#channel>, <:emoji:id>, <t:unix:style> and \ escapes.

const FENCE = /```(?:([\w+#.-]*)\n)?([\s\S]*?)```/g;

const RULES = [
  ["code", /(`+)([\s\S]*?[^`])\1(?!`)/y],
  ["escape", /\\([*_~`|\\<>[\]()#>-])/y],
  ["bold", /\*\*([\s\S]+?)\*\*(?!\*)/y],
  ["underline", /__([\s\S]+?)__(?!_)/y],
  ["italic", /\*(?![\s*])([\s\S]*?[^\s*])\*(?!\*)/y],
  ["italic_", /_(?![\s_])([\s\S]*?[^\s_])_(?![\p{L}\p{N}_])/uy],
  ["strike", /~~([\s\S]+?)~~/y],
  ["spoiler", /\|\|([\s\S]+?)\|\|/y],
  ["link", /\[([^[\]\n]+)\]\(<?(https?:\/\/[^\s)>]+)>?\)/y],
  ["url", /<?(https?:\/\/[^\s<>]*[^\s<>.,:;"')\]])>?/y],
  ["user", /<@!?(\d+)>/y],
  ["role", /<@&(\d+)>/y],
  ["channel", /<#(\d+)>/y],
  ["emoji", /<a?:(\w+):(\d+)>/y],
  ["time", /<t:(-?\d{1,13})(?::([tTdDfFR]))?>/y],
];
const STARTS = new Set(["`", "\\", "*", "_", "~", "|", "[", "h", "<"]);

/** An http(s) address, or null for anything else (javascript:, data:, relative...). */
export function safeUrl(text) {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function el(tag, className, children = []) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) node.append(child);
  return node;
}

export function link(href, label) {
  const a = el("a", "md-link");
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer nofollow";
  a.textContent = label;
  a.title = href;
  return a;
}

const TIME_STYLES = {
  t: { timeStyle: "short" },
  T: { timeStyle: "medium" },
  d: { dateStyle: "short" },
  D: { dateStyle: "long" },
  f: { dateStyle: "long", timeStyle: "short" },
  F: { dateStyle: "full", timeStyle: "short" },
};
const RELATIVE_UNITS = [
  ["year", 365 * 86400],
  ["month", 30 * 86400],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/** "3 days ago", "in 2 hours": how Discord shows a relative (`R`) timestamp, now. */
export function relativeTime(date, now = Date.now()) {
  const seconds = (date.getTime() - now) / 1000;
  const size = Math.abs(seconds);
  if (size < 1) return new Intl.RelativeTimeFormat(undefined, { numeric: "auto" }).format(0, "second");
  const [unit, length] = RELATIVE_UNITS.find(([, span]) => size >= span) || ["second", 1];
  const amount = Math.trunc(size / length) * Math.sign(seconds);
  return new Intl.RelativeTimeFormat(undefined, { numeric: "always" }).format(amount, unit);
}

function timeText(date, style) {
  if (style === "R") return relativeTime(date);
  return date.toLocaleString(undefined, TIME_STYLES[style] || TIME_STYLES.f);
}

/**
 * A `<t:unix:style>` timestamp as Discord shows it (the full date on hover), as text. A
 * relative one keeps its `data-unix` so `refreshTimes` can bring it up to date.
 */
function timestamp(seconds, style) {
  const date = new Date(Number(seconds) * 1000);
  const span = el("span", "md-time");
  if (Number.isNaN(date.getTime())) {
    span.textContent = `<t:${seconds}${style ? ":" + style : ""}>`;
    return span;
  }
  span.textContent = timeText(date, style);
  span.title = date.toLocaleString(undefined, TIME_STYLES.F);
  if (style === "R") span.dataset.unix = String(seconds);
  return span;
}

/** Bring every relative timestamp under `root` up to date (the page calls it now and then). */
export function refreshTimes(root) {
  for (const span of root.querySelectorAll(".md-time[data-unix]")) {
    span.textContent = relativeTime(new Date(Number(span.dataset.unix) * 1000));
  }
}

function token(kind, m, ctx) {
  switch (kind) {
    case "code": {
      const code = el("code", "md-code");
      code.textContent = m[2].replace(/^ (.*) $/s, "$1");
      return code;
    }
    case "escape":
      return document.createTextNode(m[1]);
    case "bold":
      return el("strong", null, [inline(m[1], ctx)]);
    case "underline":
      return el("u", null, [inline(m[1], ctx)]);
    case "italic":
    case "italic_":
      return el("em", null, [inline(m[1], ctx)]);
    case "strike":
      return el("s", null, [inline(m[1], ctx)]);
    case "spoiler": {
      const span = el("span", "md-spoiler", [inline(m[1], ctx)]);
      span.title = "spoiler: click to show";
      span.addEventListener("click", () => span.classList.add("shown"));
      return span;
    }
    case "link":
    case "url": {
      const href = safeUrl(m[2] || m[1]);
      return href ? link(href, m[1]) : document.createTextNode(m[0]);
    }
    case "user":
      return mention("@" + ctx.userName(m[1]));
    case "role":
      return mention("@role");
    case "channel":
      return mention("#" + ctx.channelName(m[1]));
    case "emoji":
      return document.createTextNode(":" + m[1] + ":");
    case "time":
      return timestamp(m[1], m[2]);
    default:
      return document.createTextNode(m[0]);
  }
}

function mention(text) {
  const span = el("span", "md-mention");
  span.textContent = text;
  return span;
}

/** Inline markdown of one run of text, as a fragment. */
export function inline(text, ctx) {
  const out = document.createDocumentFragment();
  let plain = "";
  let i = 0;
  while (i < text.length) {
    let matched = null;
    if (STARTS.has(text[i]) && !(text[i] === "_" && /[\p{L}\p{N}]/u.test(text[i - 1] || ""))) {
      for (const [kind, rule] of RULES) {
        rule.lastIndex = i;
        const m = rule.exec(text);
        if (m) {
          matched = [kind, m];
          break;
        }
      }
    }
    if (!matched) {
      plain += text[i];
      i += 1;
      continue;
    }
    if (plain) out.append(document.createTextNode(plain));
    plain = "";
    out.append(token(matched[0], matched[1], ctx));
    i += matched[1][0].length;
  }
  if (plain) out.append(document.createTextNode(plain));
  return out;
}

function lines(text, ctx) {
  const out = document.createDocumentFragment();
  let paragraph = [];
  let quote = [];
  let list = [];
  const flushParagraph = () => {
    if (!paragraph.length) return;
    const p = el("div", "md-p");
    paragraph.forEach((line, index) => {
      if (index) p.append(el("br"));
      p.append(inline(line, ctx));
    });
    out.append(p);
    paragraph = [];
  };
  const flushQuote = () => {
    if (!quote.length) return;
    out.append(el("blockquote", "md-quote", [lines(quote.join("\n"), { ...ctx, inQuote: true })]));
    quote = [];
  };
  const flushList = () => {
    if (!list.length) return;
    out.append(el("ul", "md-list", list.map((item) => el("li", null, [inline(item, ctx)]))));
    list = [];
  };
  const flush = () => {
    flushParagraph();
    flushQuote();
    flushList();
  };
  const all = text.split("\n");
  for (let index = 0; index < all.length; index += 1) {
    const line = all[index];
    let m;
    if (line.startsWith(">>> ")) {
      flush();
      quote = [line.slice(4), ...all.slice(index + 1)];
      break;
    }
    if ((m = /^> (.*)$|^>$/.exec(line)) && !ctx.inQuote) {
      flushParagraph();
      flushList();
      quote.push(m[1] || "");
      continue;
    }
    flushQuote();
    if ((m = /^[-*] (.*)$/.exec(line))) {
      flushParagraph();
      list.push(m[1]);
      continue;
    }
    flushList();
    if ((m = /^-# (.*)$/.exec(line))) {
      flushParagraph();
      out.append(el("div", "md-subtext", [inline(m[1], ctx)]));
    } else if ((m = /^(#{1,3}) (.*)$/.exec(line))) {
      flushParagraph();
      out.append(el("div", "md-h" + m[1].length, [inline(m[2], ctx)]));
    } else {
      paragraph.push(line);
    }
  }
  flush();
  return out;
}

/** A ```diff block's lines, coloured as Discord colours them: added, removed, hunk headers. */
function diffLines(body) {
  return body.split("\n").map((line, n, all) => {
    let kind = "";
    if (/^(\+\+\+|---) /.test(line)) kind = "md-diff-file";
    else if (line.startsWith("+")) kind = "md-diff-add";
    else if (line.startsWith("-")) kind = "md-diff-del";
    else if (line.startsWith("@@")) kind = "md-diff-hunk";
    return el("span", kind || "md-diff-line", [line + (n < all.length - 1 ? "\n" : "")]);
  });
}

/**
 * Render Discord message content. `ctx` names ids: `{userName(id), channelName(id)}`.
 */
export function renderMarkdown(text, ctx) {
  const out = document.createDocumentFragment();
  let last = 0;
  FENCE.lastIndex = 0;
  for (const m of text.matchAll(FENCE)) {
    if (m.index > last) out.append(lines(text.slice(last, m.index).replace(/\n$/, ""), ctx));
    const pre = el("pre", "md-codeblock");
    const code = el("code");
    const body = m[2].replace(/\n$/, "");
    if (m[1] === "diff") {
      code.append(...diffLines(body));
    } else {
      code.textContent = body;
    }
    if (m[1]) code.dataset.lang = m[1];
    pre.append(code);
    out.append(pre);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.append(lines(text.slice(last).replace(/^\n/, ""), ctx));
  return out;
}
