// /edit/<path>: a CodeMirror 6 editor bound to the file's block (room
// "file:<path>", the doc's root Text "content") through loro-websocket, with
// remote cursors and names over the ephemeral room, and the history panel.
import { defaultKeymap } from "@codemirror/commands";
import { searchKeymap, highlightSelectionMatches } from "@codemirror/search";
import { ChangeSet, EditorState, type Extension } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { EphemeralStore, LoroDoc, UndoManager } from "loro-crdt";
import { LoroEphemeralAdaptor, LoroAdaptor } from "loro-adaptors/loro";
import { LoroExtensions, redo, undo } from "loro-codemirror";
import { LoroWebsocketClient, type LoroWebsocketClientRoom } from "loro-websocket";

import { api, personName, token, type FileInfo } from "./api";
import { bytesText, h, historyHref, link, notice } from "./dom";
import { historyPanel } from "./views";

const kColours = 6;

// loro-codemirror applies some remote changes (a Loro "checkout" event) as one
// replace of the whole text, which sends the cursor to the start of the file
// while the person types. After such a replace the selection goes back to where
// the text around it went: mapped through the part that actually differs.
function keepSelectionOnWholeReplace(): Extension {
  return EditorView.updateListener.of((u) => {
    const before = u.startState.doc;
    if (!u.docChanged || before.length === 0) return;
    let changes = 0;
    let whole = false;
    u.changes.iterChanges((fromA, toA) => {
      ++changes;
      whole = fromA === 0 && toA === before.length;
    });
    if (changes !== 1 || !whole) return;
    const a = before.toString();
    const b = u.state.doc.toString();
    const most = Math.min(a.length, b.length);
    let prefix = 0;
    while (prefix < most && a.charCodeAt(prefix) === b.charCodeAt(prefix)) ++prefix;
    let suffix = 0;
    while (suffix < most - prefix && a.charCodeAt(a.length - 1 - suffix) === b.charCodeAt(b.length - 1 - suffix)) {
      ++suffix;
    }
    const differs = ChangeSet.of(
      { from: prefix, to: a.length - suffix, insert: b.slice(prefix, b.length - suffix) },
      a.length,
    );
    const selection = u.startState.selection.map(differs);
    if (selection.eq(u.state.selection)) return;
    // (A view cannot dispatch while it updates.)
    queueMicrotask(() => {
      if (u.view.state.doc === u.state.doc) u.view.dispatch({ selection });
    });
  });
}

function colourClass(name: string): string {
  let n = 0;
  for (const c of name) n = (n * 31 + c.charCodeAt(0)) >>> 0;
  return `user-c${n % kColours}`;
}

// What the editor shows instead of itself for a file it cannot edit.
function notEditable(info: FileInfo): string | null {
  switch (info.kind) {
    case "binary":
      return `${info.path} is a binary file (${bytesText(info.size ?? 0)}): it has no text to edit.`;
    case "too_large":
      return `${info.path} is ${bytesText(info.size ?? 0)}, more than the ${bytesText(info.max_editor_bytes ?? 0)} the editor opens.`;
    case "missing":
      return `${info.path} does not exist.`;
    case "directory":
      return `${info.path} is a directory.`;
    case "special":
      return `${info.path} is not a regular file (a link, a pipe or a device).`;
    default:
      return null;
  }
}

export interface EditorSession {
  destroy(): void;
}

declare global {
  interface Window {
    weft?: { view: EditorView; doc: LoroDoc; client: LoroWebsocketClient; ready: boolean };
  }
}

export async function editView(main: HTMLElement, path: string): Promise<EditorSession | null> {
  document.title = `weft: ${path}`;
  const connection = h("span", { class: "connection", role: "status", "aria-live": "polite" }, "Opening…");
  const banner = h("div", { class: "banner" });
  const header = h("div", { class: "edit-head" },
    h("h1", { title: path }, path), connection, link(historyHref(path), "Full history"));
  const host = h("div", { class: "editor", "aria-label": `Editor for ${path}` });
  const aside = h("aside", { class: "side", "aria-label": "History" });
  main.replaceChildren(header, banner, h("div", { class: "edit-layout" }, host, aside));

  let info: FileInfo;
  try {
    info = await api.file(path);
  } catch (err) {
    banner.replaceChildren(notice((err as Error).message, "error"));
    connection.textContent = "";
    return null;
  }
  const why = notEditable(info);
  if (why) {
    host.replaceChildren(notice(why, "info"));
    host.classList.add("placeholder");
    connection.textContent = "";
    void historyPanel(path, true).then((p) => aside.replaceChildren(p));
    return null;
  }
  const readOnly = info.read_only === true;
  if (readOnly) {
    banner.replaceChildren(notice(`Read only: ${info.rule ?? "a rule makes this file read-only"}.`, "info"));
  } else if (info.needs_approval) {
    banner.replaceChildren(notice(`Changes by agents need a person's approval here (${info.rule}).`, "info"));
  }

  const doc = new LoroDoc();
  const ephemeral = new EphemeralStore(30_000);
  const undoManager = new UndoManager(doc, {});
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const t = token();
  const client = new LoroWebsocketClient({
    // ?name= is who the server records typing as (human:<name>).
    url: `${scheme}://${location.host}/sync?${new URLSearchParams({ token: t, ...(personName() ? { name: personName() } : {}) })}`,
  });
  const auth = new TextEncoder().encode(t);
  let everConnected = false;
  // Set when the server closed the connection for good (a wrong token, say
  // after `weft serve` restarted with a new one): the client stops retrying.
  let refused = false;
  const refusedNotice = notice("weft closed the connection and does not take this page back. If `weft serve` was " +
    "restarted, it printed a new address with a new token: open it. What you typed since the connection was lost " +
    "is only in this tab.", "error");
  client.onStatusChange((s) => {
    if (refused && s === "disconnected") {
      connection.textContent = "Disconnected: not reconnecting";
      connection.title = "weft refused this page's connection; your edits since are not sent.";
      connection.dataset.state = "refused";
      banner.append(refusedNotice);
    } else if (s === "connected") {
      everConnected = true;
      connection.textContent = "Live";
      connection.title = "";
      connection.dataset.state = "live";
    } else if (everConnected) {
      connection.textContent = "Reconnecting… your typing is kept";
      connection.title = "The connection to weft was lost. Keep typing: your edits are sent when it is back.";
      connection.dataset.state = "lost";
    } else {
      connection.textContent = "Connecting…";
      connection.dataset.state = "connecting";
    }
  });

  // A server that never answers the join: say so, and keep trying.
  const unreachable = notice(`Live editing cannot reach the server (${scheme}://${location.host}/sync) yet; still trying.`, "error");
  const slow = window.setTimeout(() => banner.append(unreachable), 8000);
  let room: LoroWebsocketClientRoom;
  try {
    room = await client.join({
      roomId: `file:${path}`,
      crdtAdaptor: new LoroAdaptor(doc),
      auth,
      onStatusChange: (s) => {
        if (s === "disconnected") refused = true;
      },
    });
    await room.waitForReachingServerVersion();
    await client.join({ roomId: `file:${path}`, crdtAdaptor: new LoroEphemeralAdaptor(ephemeral), auth });
  } catch (err) {
    clearTimeout(slow);
    client.destroy();
    const msg = (err as Error).message || String(err);
    banner.replaceChildren(notice(`Live editing could not start: ${msg}`, "error"));
    connection.textContent = "Offline";
    return null;
  }

  clearTimeout(slow);
  unreachable.remove();
  const name = personName() || "guest";
  const view = new EditorView({
    parent: host,
    state: EditorState.create({
      extensions: [
        lineNumbers(),
        highlightSpecialChars(),
        drawSelection(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        EditorView.lineWrapping,
        keepSelectionOnWholeReplace(),
        EditorState.readOnly.of(readOnly),
        EditorView.contentAttributes.of({ "aria-label": `Text of ${path}` }),
        keymap.of([
          { key: "Mod-z", run: (v: EditorView) => undo(v) },
          { key: "Mod-y", mac: "Mod-Shift-z", run: (v: EditorView) => redo(v) },
          ...defaultKeymap,
          ...searchKeymap,
        ]),
        LoroExtensions(
          doc,
          { user: { name, colorClassName: colourClass(name) }, ephemeral },
          undoManager,
          (d) => d.getText("content"),
        ),
      ],
    }),
  });
  window.weft = { view, doc, client, ready: true };

  // The history panel follows the file's changes, a little behind them.
  let timer: number | undefined;
  const refresh = () => void historyPanel(path, true).then((p) => aside.replaceChildren(p));
  refresh();
  const unsubscribe = doc.subscribe(() => {
    clearTimeout(timer);
    timer = window.setTimeout(refresh, 1000);
  });

  return {
    destroy() {
      clearTimeout(timer);
      unsubscribe();
      view.destroy();
      client.destroy();
      if (window.weft?.view === view) delete window.weft;
    },
  };
}
