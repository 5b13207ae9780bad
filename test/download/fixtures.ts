import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CatalogueEntry } from "../../src/download/CatalogueEntry.js";
import type { ProgressOutput } from "../../src/download/DownloadProgress.js";
import { FakeHub, fixture, type HubFile } from "./fakeHub.js";

export const chatFile = fixture(300_000);
export const embedConfig = fixture(200);
export const embedModel = fixture(250_000);
export const extraFile = fixture(100_000);
const revision = () => randomBytes(20).toString("hex");

/**
 * A catalogue of three generated models: two defaults (a chat file, an embeddings folder with a
 * nested file, hashes known only to the hub) and an extra chat model whose path needs encoding.
 */
export function testCatalogue(): CatalogueEntry[] {
    const common = {released: "2024-01-01", licence: "apache-2.0", description: "test fixture", aliases: [] as string[]};
    return [
        {...common, id: "tiny-chat", task: "chat", family: "tiny", default: true, aliases: ["gpt-3.5-turbo", "gpt-4o-mini"],
            repo: "test-org/tiny-chat-GGUF", revision: revision(),
            files: [{path: "tiny-chat.q4.gguf", size: chatFile.content.length, sha256: chatFile.sha256}],
            manifest: {path: "tiny-chat.q4.gguf", contextSize: 512, threads: 2}},
        {...common, id: "tiny-embed", task: "embeddings", family: "tiny-embed", default: true, aliases: ["text-embedding-ada-002"],
            repo: "test-org/tiny-embed", revision: revision(),
            files: [{path: "config.json", size: null, sha256: null}, {path: "onnx/model_quantized.onnx", size: embedModel.content.length, sha256: null}],
            manifest: {path: "."}},
        {...common, id: "tiny-extra", task: "chat", family: "tiny", released: "2023-01-01", default: false,
            repo: "test-org/extra", revision: revision(),
            files: [{path: "sub dir/extra model.gguf", size: extraFile.content.length, sha256: extraFile.sha256}],
            manifest: {path: "sub dir/extra model.gguf"}}
    ];
}

/** The hub files behind a catalogue made by testCatalogue(). */
export function hubFiles(catalogue: CatalogueEntry[]): HubFile[] {
    const content: Record<string, Buffer> = {
        "tiny-chat.q4.gguf": chatFile.content, "config.json": embedConfig.content,
        "onnx/model_quantized.onnx": embedModel.content, "sub dir/extra model.gguf": extraFile.content
    };
    return catalogue.flatMap((entry) => entry.files.map((file) => ({repo: entry.repo, revision: entry.revision, path: file.path, content: content[file.path]})));
}

export type Setup = {hub: FakeHub, catalogue: CatalogueEntry[], dir: string, modelsDir: string, manifestPath: string, cataloguePath: string, output: Collected};

export type Collected = ProgressOutput & {text: () => string};

/** A non-TTY output that keeps everything written to it. */
export function collect(isTTY = false): Collected {
    let text = "";
    return {isTTY, columns: 100, write: (chunk: string) => text += chunk, text: () => text};
}

/** A fresh temp folder, catalogue (also written to a file, for the CLI) and running fake hub. */
export async function setUp(): Promise<Setup> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-download-"));
    const catalogue = testCatalogue();
    const cataloguePath = path.join(dir, "catalogue.json");
    fs.writeFileSync(cataloguePath, JSON.stringify({models: catalogue}, null, 2));
    const hub = await new FakeHub(hubFiles(catalogue)).start();
    const modelsDir = path.join(dir, "models");
    hub.partFileOf = (filePath) => {
        const entry = catalogue.find((candidate) => candidate.files.some((file) => file.path === filePath))!;
        return path.join(modelsDir, entry.id, `${filePath}.part`);
    };
    return {hub, catalogue, dir, modelsDir, manifestPath: path.join(modelsDir, "models.json"), cataloguePath, output: collect()};
}

export async function tearDown(setup: Setup | undefined) {
    if (setup == null)
        return;
    await setup.hub.close();
    fs.rmSync(setup.dir, {recursive: true, force: true});
}

/** Every file under a folder, relative, sorted (to show what a run left behind). */
export function filesUnder(dir: string): string[] {
    if (!fs.existsSync(dir))
        return [];
    return (fs.readdirSync(dir, {recursive: true}) as string[])
        .filter((name) => fs.statSync(path.join(dir, name)).isFile())
        .map((name) => name.split(path.sep).join("/"))
        .sort();
}
