// The tree (/), history (/history/<path> and the editor's panel) and
// approvals (/approvals) views.
import { api, ApiError, personName, type TreeEntry } from "./api";
import { bytesText, diffView, editHref, h, historyHref, link, notice, timeText } from "./dom";

function badges(e: TreeEntry): HTMLElement {
  const span = h("span", { class: "badges" });
  const add = (text: string, cls: string, title: string) =>
    span.append(h("span", { class: `badge ${cls}`, title }, text));
  const s = e.state;
  if (s?.dirty) add("unsaved", "warn", "The block has changes not yet written to disk");
  if (s?.disk_ahead) add("disk ahead", "warn", "The file changed on disk since the block last synced");
  if (s?.frozen) add("frozen", "muted", s.frozen);
  const pending = s?.pending_approvals.length ?? e.below?.pending ?? 0;
  if (pending) add(`${pending} pending`, "pending", "Changes waiting for a person's approval");
  if (e.below?.dirty) add("unsaved inside", "warn", "A file below has unsaved changes");
  const perm = s?.permission ?? e.permission;
  if (perm && perm !== "read_write") add(perm.replace("_", " "), "perm", `Permission: ${perm}`);
  return span;
}

async function fillDirectory(list: HTMLUListElement, path: string): Promise<void> {
  const data = await api.tree(path);
  list.replaceChildren();
  for (const e of data.entries) {
    const li = h("li", {});
    if (e.dir) {
      const child = h("ul", { class: "tree", hidden: true });
      const button = h(
        "button",
        { class: "dir", "aria-expanded": "false", type: "button" },
        e.name + "/",
      );
      button.addEventListener("click", async () => {
        const open = button.getAttribute("aria-expanded") === "true";
        button.setAttribute("aria-expanded", String(!open));
        child.hidden = open;
        if (!open && !child.childElementCount) {
          try {
            await fillDirectory(child, e.path);
          } catch (err) {
            child.replaceChildren(h("li", {}, notice((err as Error).message, "error")));
          }
        }
      });
      li.append(button, badges(e), child);
    } else {
      li.append(link(editHref(e.path), e.name, { class: "file" }), badges(e),
        link(historyHref(e.path), "history", { class: "small", "aria-label": `History of ${e.path}` }));
    }
    list.append(li);
  }
  if (data.more) list.append(h("li", { class: "muted" }, `… and ${data.more} more`));
}

export async function treeView(main: HTMLElement): Promise<void> {
  document.title = "weft: files";
  const list = h("ul", { class: "tree", "aria-label": "Workspace files" });
  main.replaceChildren(h("h1", {}, "Files"), list);
  try {
    await fillDirectory(list, ".");
  } catch (err) {
    main.append(notice((err as Error).message, "error"));
  }
}

// The history of one file: each change with author and time, its diff, and
// a rollback button. `compact`: the panel beside the editor.
function changesText(n: number): string {
  return n === 1 ? "Change" : `${n} changes`;
}

export async function historyPanel(path: string, compact: boolean): Promise<HTMLElement> {
  const section = h("section", { class: compact ? "history compact" : "history", "aria-label": `History of ${path}` });
  const status = h("div", { class: "panel-status", role: "status" });
  let entries;
  try {
    entries = (await api.history(path, compact ? 30 : 200)).entries;
  } catch (err) {
    section.append(notice((err as Error).message, "error"));
    return section;
  }
  const list = h("ol", { class: "changes" });
  for (const [i, e] of entries.entries()) {
    const diffBox = h("div", { class: "diff-box" });
    const show = h("button", { type: "button", "aria-expanded": "false" }, "Diff");
    show.addEventListener("click", async () => {
      const open = show.getAttribute("aria-expanded") === "true";
      show.setAttribute("aria-expanded", String(!open));
      if (open) return void diffBox.replaceChildren();
      try {
        const d = await api.diff(path, e.from, e.version);
        diffBox.replaceChildren(diffView(d.diff, `${changesText(e.changes)} by ${e.author}`));
      } catch (err) {
        diffBox.replaceChildren(notice((err as Error).message, "error"));
      }
    });
    const actions = h("span", { class: "actions" }, show);
    if (i > 0) {
      const back = h("button", { type: "button", class: "danger" }, "Roll back to this");
      back.addEventListener("click", async () => {
        if (!personName()) return void status.replaceChildren(notice("Enter your name at the top first: changes are made as human:<name>.", "error"));
        if (!confirm(`Roll ${path} back to the version after this change by ${e.author}?`)) return;
        try {
          const r = await api.rollback(path, e.version);
          status.replaceChildren(notice(r.pending_approval ? `Rollback waits for approval ${r.pending_approval}.` : "Rolled back.", "info"));
        } catch (err) {
          status.replaceChildren(notice((err as Error).message, "error"));
        }
      });
      actions.append(back);
    }
    list.append(h("li", {},
      h("span", { class: "author" }, e.author),
      " ",
      h("time", { datetime: new Date(e.timestamp * 1000).toISOString() }, timeText(e.timestamp)),
      e.message ? h("span", { class: "what" }, ` ${e.message}`) : null,
      e.changes > 1 ? h("span", { class: "what" }, ` (${changesText(e.changes)})`) : null,
      actions,
      diffBox));
  }
  if (!entries.length) list.append(h("li", { class: "muted" }, "No changes yet."));
  section.append(h(compact ? "h2" : "h1", {}, compact ? "History" : `History of ${path}`), status, list);
  return section;
}

export async function historyView(main: HTMLElement, path: string): Promise<void> {
  document.title = `weft: history of ${path}`;
  main.replaceChildren(h("p", {}, link(editHref(path), `Edit ${path}`)), await historyPanel(path, false));
}

export async function approvalsView(main: HTMLElement): Promise<void> {
  document.title = "weft: approvals";
  const status = h("div", { role: "status", class: "panel-status" });
  main.replaceChildren(h("h1", {}, "Approvals"), status);
  let approvals;
  try {
    approvals = (await api.approvals()).approvals;
  } catch (err) {
    main.append(notice((err as Error).message, "error"));
    return;
  }
  if (!approvals.length) {
    main.append(h("p", {}, "Nothing waits for a person's approval."));
    return;
  }
  const list = h("ul", { class: "approvals" });
  for (const a of approvals) {
    const item = h("li", { class: "approval" });
    const decide = async (action: "approve" | "reject") => {
      if (!personName()) {
        status.replaceChildren(notice("Enter your name at the top first: you decide as human:<name>.", "error"));
        return;
      }
      try {
        await api.decide(a.id, action);
        item.replaceChildren(notice(`${action === "approve" ? "Approved" : "Rejected"} ${a.op} of ${a.path}.`));
      } catch (err) {
        status.replaceChildren(notice((err as ApiError).message, "error"));
      }
    };
    item.append(
      h("h2", {}, `${a.op} ${a.path}`, a.target_path && a.op !== "shell" ? ` → ${a.target_path}` : ""),
      h("p", { class: "meta" }, `by ${a.author} (${a.what}) · ${new Date(a.created_at_ms).toLocaleString()} · ${a.rule}`),
      diffView(a.op === "shell" ? a.target_path : a.diff, `Proposed change to ${a.path}`),
      ...(a.disk_diff ? [diffView(a.disk_diff, `What the disk did to ${a.path}`)] : []),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: () => void decide("approve") }, "Approve"),
        h("button", { type: "button", class: "danger", onclick: () => void decide("reject") }, "Reject"),
        link(editHref(a.path), "Open file")),
    );
    list.append(item);
  }
  main.append(list);
}

export { bytesText };
