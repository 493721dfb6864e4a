// The page's side of the JSON API (src/server/web_routes.cc) and its token.

const kTokenKey = "weft.token";
const kNameKey = "weft.name";

// Takes ?token= from the first URL into storage (like Jupyter) and removes it
// from the address bar, so that it is neither bookmarked nor shown.
export function adoptToken(): void {
  const url = new URL(location.href);
  const token = url.searchParams.get("token");
  if (token !== null) {
    sessionStorage.setItem(kTokenKey, token);
    localStorage.setItem(kTokenKey, token);
    url.searchParams.delete("token");
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  }
}

export function token(): string {
  return sessionStorage.getItem(kTokenKey) ?? localStorage.getItem(kTokenKey) ?? "";
}

export function personName(): string {
  return localStorage.getItem(kNameKey) ?? "";
}

export function setPersonName(name: string): void {
  localStorage.setItem(kNameKey, name);
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const t = token();
  if (t) headers["Authorization"] = `Bearer ${t}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(`/api/${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError("The server cannot be reached: is `weft serve` still running?", 0);
  }
  const data = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) throw new ApiError(data.error ?? `The server answered ${res.status}`, res.status);
  return data as T;
}

export interface FileState {
  block: boolean;
  dirty: boolean;
  disk_ahead: boolean;
  deleted: boolean;
  frozen: string;
  permission: string;
  version: string;
  pending_approvals: string[];
}

export interface TreeEntry {
  name: string;
  path: string;
  dir: boolean;
  permission?: string;
  state?: FileState;
  below?: { pending: number; dirty: boolean; disk_ahead: boolean };
}

export interface FileInfo {
  path: string;
  kind: "text" | "binary" | "too_large" | "missing" | "directory" | "special";
  size?: number;
  max_editor_bytes?: number;
  read_only?: boolean;
  needs_approval?: boolean;
  permission?: string;
  rule?: string;
  kernel?: boolean;
  state?: FileState;
}

// One entry of a file's history: a writer's run of changes (see docs/web.md),
// from `from` (the version its first change was made on) to `version`.
export interface HistoryEntry {
  version: string;
  from: string;
  author: string;
  message: string;
  timestamp: number;
  first_timestamp: number;
  changes: number;
}

export interface Approval {
  id: string;
  path: string;
  author: string;
  what: string;
  op: string;
  rule: string;
  diff: string;
  disk_diff: string;
  target_path: string;
  created_at_ms: number;
  state: string;
}

const q = encodeURIComponent;

export const api = {
  tree: (path: string) =>
    call<{ path: string; entries: TreeEntry[]; more: number }>("GET", `tree?path=${q(path)}`),
  file: (path: string) => call<FileInfo>("GET", `file?path=${q(path)}`),
  history: (path: string, limit = 200) =>
    call<{ entries: HistoryEntry[] }>("GET", `history?path=${q(path)}&limit=${limit}`),
  diff: (path: string, from: string, to: string) =>
    call<{ diff: string }>("GET", `diff?path=${q(path)}&from=${q(from)}&to=${q(to)}`),
  rollback: (path: string, version: string) =>
    call<{ applied: boolean; pending_approval: string }>("POST", "rollback", {
      path,
      version,
      person: personName(),
    }),
  approvals: () => call<{ approvals: Approval[] }>("GET", "approvals"),
  decide: (id: string, action: "approve" | "reject") =>
    call<unknown>("POST", `approvals/${q(id)}/${action}`, { person: personName() }),
};
