// The page's entry: loads the CRDT engine, keeps the token, and routes
// /, /edit/<path>, /history/<path> and /approvals without reloading.
import * as loro from "loro-crdt";

import { adoptToken, api, personName, setPersonName } from "./api";
import { h, link } from "./dom";
import { editView, type EditorSession } from "./editor";
import { approvalsView, historyView, treeView } from "./views";
import "./style.css";

// The loro-crdt "web" build (build.mjs aliases it) fetches its WebAssembly here.
const initLoro = (loro as unknown as { default: (o: { module_or_path: string }) => Promise<unknown> }).default;

let session: EditorSession | null = null;
const main = h("main", { id: "main", tabindex: "-1" });
const approvalsLink = link("/approvals", "Approvals", { id: "nav-approvals" });

// Only the editor needs the CRDT engine: its WebAssembly loads on the first
// /edit/ route, so the tree, history and approvals open without it.
let loroLoading: Promise<unknown> | null = null;
async function loroReady(): Promise<boolean> {
  loroLoading ??= initLoro({ module_or_path: "/assets/loro_wasm_bg.wasm" });
  try {
    await loroLoading;
    return true;
  } catch (err) {
    loroLoading = null;
    main.replaceChildren(h("p", { role: "alert" }, `The page could not load its CRDT engine: ${(err as Error).message}`));
    return false;
  }
}

function pathAfter(prefix: string): string {
  return location.pathname
    .slice(prefix.length)
    .split("/")
    .map((s) => decodeURIComponent(s))
    .join("/");
}

async function route(): Promise<void> {
  session?.destroy();
  session = null;
  const p = location.pathname;
  for (const a of document.querySelectorAll("nav a")) {
    const here = (a as HTMLAnchorElement).pathname === p || (p === "/" && (a as HTMLAnchorElement).pathname === "/");
    if (here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (p.startsWith("/edit/")) {
    if (!(await loroReady())) return;
    session = await editView(main, pathAfter("/edit/"));
  }
  else if (p.startsWith("/history/")) await historyView(main, pathAfter("/history/"));
  else if (p === "/approvals") await approvalsView(main);
  else await treeView(main);
  void refreshApprovalCount();
}

async function refreshApprovalCount(): Promise<void> {
  try {
    const n = (await api.approvals()).approvals.length;
    approvalsLink.textContent = n ? `Approvals (${n})` : "Approvals";
  } catch {
    // The views show API errors; the count is a hint.
  }
}

function header(): HTMLElement {
  const name = h("input", {
    id: "person",
    type: "text",
    autocomplete: "nickname",
    placeholder: "your name",
    pattern: "[A-Za-z0-9._-]{1,64}",
    value: personName(),
  });
  name.addEventListener("change", () => {
    const v = name.value.trim();
    if (/^[A-Za-z0-9._-]{1,64}$/.test(v)) setPersonName(v);
    name.setAttribute("aria-invalid", String(!/^[A-Za-z0-9._-]{1,64}$/.test(v)));
  });
  return h("header", {},
    h("a", { class: "skip", href: "#main" }, "Skip to content"),
    h("nav", { "aria-label": "Main" }, link("/", "weft", { class: "brand" }), link("/", "Files"), approvalsLink),
    h("label", { for: "person", class: "person" }, "Name ", name));
}

async function start(): Promise<void> {
  adoptToken();
  document.body.replaceChildren(header(), main);
  // Links marked data-route change the view in place; the address stays bookmarkable.
  document.addEventListener("click", (e) => {
    const a = (e.target as Element).closest("a[data-route]") as HTMLAnchorElement | null;
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    if (a.pathname + a.search !== location.pathname + location.search) history.pushState(null, "", a.href);
    void route().then(() => main.focus({ preventScroll: true }));
  });
  window.addEventListener("popstate", () => void route());
  await route();
}

void start();
