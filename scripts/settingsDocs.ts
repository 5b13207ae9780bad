// `npm run docs:settings`: writes docs/configuration.md's table of settings from src/config.ts's rows
// (test/unit/settingsTable.test.ts fails while the two differ).
import fs from "node:fs";
import path from "node:path";
import { allSettings } from "../src/config.js";
import { docsTable } from "../src/settings/describeSettings.js";

export const settingsDocsFile = path.resolve(import.meta.dirname, "../docs/configuration.md");
export const settingsDocsMarkers = ["<!-- settings table: `npm run docs:settings` writes it from the rows src/config.ts reads (src/settings/serverSettings.ts, each capability's *ServerSettings.ts); edit them there -->", "<!-- end of settings table -->"] as const;

/** The file's text with the generated table between the markers. */
export function withSettingsTable(text: string) {
    const [start, end] = settingsDocsMarkers.map((marker) => text.indexOf(marker));
    if (start < 0 || end < start)
        throw new Error(`${settingsDocsFile} lacks the markers ${settingsDocsMarkers.join(" ... ")}`);
    return `${text.slice(0, start)}${settingsDocsMarkers[0]}\n${docsTable(allSettings)}\n${text.slice(end)}`;
}

if (import.meta.url === `file://${process.argv[1]}`)
    fs.writeFileSync(settingsDocsFile, withSettingsTable(fs.readFileSync(settingsDocsFile, "utf8")));
