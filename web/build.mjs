// Builds the page into one bundle file that the weft binary embeds
// (src/server/web_assets.cc; the format is described in web_assets.h):
//   node build.mjs OUT_FILE
// esbuild bundles src/main.ts (and its CSS) minified; loro-crdt is its "web"
// build, whose WebAssembly is served beside the script.
import * as esbuild from "esbuild";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync, constants } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error("usage: node build.mjs OUT_FILE");
  process.exit(2);
}
const loroWeb = join(here, "node_modules/loro-crdt/web");

const result = await esbuild.build({
  entryPoints: { app: join(here, "src/main.ts") },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022"],
  outdir: "out",
  write: false,
  metafile: true,
  legalComments: "none",
  alias: { "loro-crdt": join(loroWeb, "index.js") },
  logLevel: "warning",
});

const files = [
  ["index.html", "text/html; charset=utf-8", readFileSync(join(here, "index.html"))],
  ["loro_wasm_bg.wasm", "application/wasm", readFileSync(join(loroWeb, "loro_wasm_bg.wasm"))],
];
for (const f of result.outputFiles) {
  const name = f.path.split("/").pop();
  const type = name.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
  files.push([name, type, Buffer.from(f.contents)]);
}

const parts = [Buffer.from("WEFTWEB1\n")];
const sizes = {};
for (const [name, type, bytes] of files) {
  const gz = gzipSync(bytes, { level: constants.Z_BEST_COMPRESSION });
  sizes[name] = { bytes: bytes.length, gzip: gz.length };
  parts.push(Buffer.from(`${name}\t${type}\tgzip\t${gz.length}\n`), gz);
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, Buffer.concat(parts));
writeFileSync(out + ".sizes.json", JSON.stringify(sizes, null, 1) + "\n");
const kb = (n) => (n / 1024).toFixed(1);
console.log(
  `web: ${out}: ` +
    Object.entries(sizes).map(([n, s]) => `${n} ${kb(s.gzip)} KB gzip`).join(", "),
);
