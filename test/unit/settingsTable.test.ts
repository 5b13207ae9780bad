import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { settingsDocsFile, settingsDocsMarkers, withSettingsTable } from "../../scripts/settingsDocs.js";
import { chatServerSettings } from "../../src/capabilities/chat/chatServerSettings.js";
import { loadServedManifest } from "../../src/capabilities/loadServedManifest.js";
import { manifestParts } from "../../src/capabilities/manifestParts.js";
import { allSettings, defaultConfig, hubSettings, loadConfig, loadHubConfig, loadStartOptions, settingsTable, startSettings, type Config } from "../../src/config.js";
import { ManifestError } from "../../src/core/registry/ManifestError.js";
import { serverSettings } from "../../src/settings/serverSettings.js";
import { usageText } from "../../src/usageText.js";

// One table of settings: what `--help` prints, docs/configuration.md's table and what loadConfig reads cannot disagree.
describe("the settings table", () => {
    it("docs/configuration.md's table is the one written from the rows (`npm run docs:settings` rewrites it)", () => {
        const docs = fs.readFileSync(settingsDocsFile, "utf8");
        expect(docs).toContain(settingsDocsMarkers[0]);
        expect(docs).toBe(withSettingsTable(docs));
        for (const setting of allSettings) {
            for (const name of [setting.flag == null ? null : `\`--${setting.flag}\``, setting.env == null ? null : `\`${setting.env}\``].filter((name) => name != null))
                expect(docs, name).toMatch(new RegExp(`^\\| [^\\n]*${name.replace(/[-]/g, "\\-")}`, "m"));
        }
    });

    it("--help names every flag and variable, deprecated names included, with its default", () => {
        const lines = usageText.split("\n");
        for (const setting of allSettings) {
            const line = lines.find((text) => (setting.flag == null || text.includes(`--${setting.flag} `) || text.endsWith(`--${setting.flag}`))
                && (setting.env == null || new RegExp(`\\s${setting.env}\\s`).test(text)))!;
            expect(line, setting.flag ?? setting.env).toBeDefined();
            const shown = Array.isArray(setting.default) ? setting.default.join(",") : setting.switch === true ? "off" : String(setting.default ?? "(none)");
            if (setting.shownDefault == null)
                expect(line, setting.flag ?? setting.env).toContain(shown);
            if (setting.deprecated != null)
                expect(usageText).toMatch(new RegExp(`--${setting.deprecated.flag} .*${setting.deprecated.env}.*deprecated`));
        }
    });

    it("no two rows share a key, a flag or a variable, whichever table (server, capability, npm start, hub) they come from", () => {
        const tables = [serverSettings, ...manifestParts.map((part) => ("settings" in part ? part.settings : {})), startSettings, hubSettings];
        const keys = tables.flatMap((table) => Object.keys(table));
        const flags = allSettings.flatMap((setting) => [setting.flag, setting.deprecated?.flag]).filter((flag) => flag != null);
        const envs = allSettings.flatMap((setting) => [setting.env, setting.deprecated?.env]).filter((env) => env != null);
        for (const names of [keys, flags, envs])
            expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
        expect(Object.keys(settingsTable).length).toBe(keys.length - Object.keys(startSettings).length - Object.keys(hubSettings).length);
    });

    it("capabilities add their own rows: chat's speculation, transcription's audio length", () => {
        expect(manifestParts.find((part) => part.task === "chat")).toMatchObject({settings: {draftMax: {flag: "draft-max"}, speculative: {env: "SPECULATIVE"}}});
        expect(manifestParts.find((part) => part.task === "transcription")).toMatchObject({settings: {maxAudioSeconds: {flag: "max-audio-seconds"}}});
        expect(loadConfig(["--draft-max", "3"], {MAX_AUDIO_SECONDS: "5"})).toMatchObject({draftMax: 3, maxAudioSeconds: 5});
    });

    it("Config has exactly the rows' keys (plus the model paths), typed from the rows", () => {
        expect(Object.keys(loadConfig([], {})).sort()).toEqual([...Object.keys(settingsTable), "modelPaths"].sort());
        expect(Object.keys(defaultConfig).sort()).toEqual([...Object.keys(settingsTable), "modelPaths"].sort());
        expectTypeOf<Config["draftMax"]>().toEqualTypeOf<number>();
        expectTypeOf<Config["speculative"]>().toEqualTypeOf<"lookup" | "draft" | "off">();
        expectTypeOf<Config["publicUrl"]>().toEqualTypeOf<string | null>();
        expectTypeOf<Config["gpuLayers"]>().toEqualTypeOf<"auto" | "max" | number>();
        expectTypeOf<Config["corsOrigins"]>().toEqualTypeOf<string[]>();
        expectTypeOf<Config["maxAudioSeconds"]>().toEqualTypeOf<number>();
        expectTypeOf<Config["metricsPublic"]>().toEqualTypeOf<boolean>();
    });

    it("every default, written as text, is read back as itself, from the flag and from the variable", () => {
        for (const [key, setting] of Object.entries(settingsTable)) {
            if (setting.default == null || setting.switch === true || (Array.isArray(setting.default) && setting.default.length === 0))
                continue;
            const written = Array.isArray(setting.default) ? setting.default.join(",") : String(setting.default);
            const expected = (loadConfig([], {}) as Record<string, unknown>)[key];
            if (setting.flag != null)
                expect((loadConfig([`--${setting.flag}=${written}`], {}) as Record<string, unknown>)[key], setting.flag).toEqual(expected);
            if (setting.env != null)
                expect((loadConfig([], {[setting.env]: written}) as Record<string, unknown>)[key], setting.env).toEqual(expected);
        }
        expect(loadHubConfig({HF_ENDPOINT: hubSettings.hfEndpoint.default})).toEqual(loadHubConfig({}));
    });

    it("a switch is on when given, else read from its variable (which names itself in errors); npm start's switches have no variable", () => {
        expect(loadConfig(["--metrics-public"], {METRICS_PUBLIC: "no"}).metricsPublic).toBe(true);
        expect(loadConfig([], {METRICS_PUBLIC: "Yes"}).metricsPublic).toBe(true);
        expect(loadStartOptions(["--download", "--allow-unverified"], {})).toMatchObject({download: true, allowUnverified: true});
        expect(loadStartOptions([], {DOWNLOAD: "1"})).toMatchObject({download: false, allowUnverified: false});
    });

    it("a manifest's draftMax has the bounds of --draft-max", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "settings-table-"));
        try {
            fs.writeFileSync(path.join(dir, "m.gguf"), "");
            const manifest = (draftMax: number) => {
                const file = path.join(dir, "models.json");
                fs.writeFileSync(file, JSON.stringify({models: [{id: "m", task: "chat", path: "m.gguf", draftMax}]}));
                return file;
            };
            const {min, max} = chatServerSettings.draftMax;
            expect(loadServedManifest(manifest(max))[0].settings).toMatchObject({draftMax: max});
            expect(loadServedManifest(manifest(min))[0].settings).toMatchObject({draftMax: min});
            for (const wrong of [min - 1, max + 1])
                expect(() => loadServedManifest(manifest(wrong))).toThrow(ManifestError);
        } finally {
            fs.rmSync(dir, {recursive: true, force: true});
        }
    });
});
