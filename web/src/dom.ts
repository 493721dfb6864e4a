// A small element builder and the shared bits of the views.

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else if (v !== false) el.setAttribute(k, v);
  }
  for (const c of children) if (c) el.append(c);
  return el;
}

// Links inside the page are followed without reloading it (see main.ts).
export function link(href: string, text: string, attrs: Record<string, string> = {}): HTMLAnchorElement {
  return h("a", { href, "data-route": "", ...attrs }, text);
}

export function editHref(path: string): string {
  return "/edit/" + path.split("/").map(encodeURIComponent).join("/");
}

export function historyHref(path: string): string {
  return "/history/" + path.split("/").map(encodeURIComponent).join("/");
}

export function timeText(seconds: number): string {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString();
}

// A unified diff as lines coloured by what they do.
export function diffView(diff: string, label: string): HTMLElement {
  const pre = h("pre", { class: "diff", tabindex: "0", "aria-label": label });
  if (!diff.trim()) {
    pre.append("(no difference)");
    return pre;
  }
  for (const line of diff.split("\n")) {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "meta"
      : line.startsWith("+") ? "add"
      : line.startsWith("-") ? "del"
      : line.startsWith("@@") ? "hunk"
      : "ctx";
    pre.append(h("span", { class: cls }, line + "\n"));
  }
  return pre;
}

// A message region for errors and results, read out by screen readers.
export function notice(text: string, kind: "error" | "info" = "info"): HTMLElement {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

export function bytesText(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
