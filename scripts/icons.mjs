#!/usr/bin/env node
// Writes the console's icons into public/ from the one drawing below (the header's mark: a white
// "A" on an indigo tile). Run by hand after changing it: `node scripts/icons.mjs`. Chromium
// rasterises the SVG (Debian's, as in e2e); favicon.ico holds PNGs, which every current browser
// reads.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "@playwright/test";
import { repoRootPath as root } from "./lib/paths.mjs";

const INDIGO_600 = "#4f46e5";
/** `tile`: rounded corners (favicons, tabs). Full-bleed otherwise: iOS and maskable icons crop it. */
const svg = ({ tile }) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">` +
  `<rect width="64" height="64" rx="${tile ? 12 : 0}" fill="${INDIGO_600}"/>` +
  // The glyph stays inside the maskable safe zone (a circle of 40% of the size around the centre).
  `<path d="M19.5 48 32 16l12.5 32M24 38h16" fill="none" stroke="#fff" stroke-width="6.5" stroke-linecap="round" stroke-linejoin="round"/>` +
  `</svg>\n`;

const out = join(root, "public");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "icon.svg"), svg({ tile: true }));

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage();
async function png(size, tile) {
  await page.setViewportSize({ width: size, height: size });
  await page.setContent(`<style>*{margin:0}svg{display:block;width:${size}px;height:${size}px}</style>${svg({ tile })}`);
  return page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
}

writeFileSync(join(out, "icon-192.png"), await png(192, true));
writeFileSync(join(out, "icon-512.png"), await png(512, true));
writeFileSync(join(out, "icon-maskable-512.png"), await png(512, false));
writeFileSync(join(out, "apple-touch-icon.png"), await png(180, false));

// ICO: a 6-byte header, a 16-byte entry per image, then the PNGs themselves.
const images = await Promise.all([16, 32, 48].map(async (size) => ({ size, data: await png(size, true) })));
const header = Buffer.alloc(6 + 16 * images.length);
header.writeUInt16LE(1, 2); // type: icon
header.writeUInt16LE(images.length, 4);
let offset = header.length;
images.forEach(({ size, data }, i) => {
  const e = 6 + 16 * i;
  header.writeUInt8(size, e);
  header.writeUInt8(size, e + 1);
  header.writeUInt16LE(1, e + 4); // colour planes
  header.writeUInt16LE(32, e + 6); // bits per pixel
  header.writeUInt32LE(data.length, e + 8);
  header.writeUInt32LE(offset, e + 12);
  offset += data.length;
});
writeFileSync(join(out, "favicon.ico"), Buffer.concat([header, ...images.map((i) => i.data)]));

await browser.close();
console.log("wrote public/icon.svg, icon-192.png, icon-512.png, icon-maskable-512.png, apple-touch-icon.png, favicon.ico");
